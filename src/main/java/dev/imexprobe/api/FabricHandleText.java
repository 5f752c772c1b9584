package dev.imexprobe.api;

import dev.imexprobe.cuda.FabricHandle;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Base64 (standard or URL-safe) of exactly 64 bytes, the size of a CUmemFabricHandle; absent or blank passes. The
 * message is the decoder's own reason (not valid base64, or how many bytes it held).
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = FabricHandleText.Check.class)
public @interface FabricHandleText {

    String message() default "handle must be the 64-byte FABRIC handle as base64";

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    final class Check implements ConstraintValidator<FabricHandleText, String> {
        @Override
        public boolean isValid(String value, ConstraintValidatorContext context) {
            if (value == null || value.isBlank()) {
                return true;
            }
            try {
                FabricHandle.fromBase64(value);
                return true;
            } catch (IllegalArgumentException e) {
                context.disableDefaultConstraintViolation();
                context.buildConstraintViolationWithTemplate(Wire.literal(e.getMessage())).addConstraintViolation();
                return false;
            }
        }
    }
}
