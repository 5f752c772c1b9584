package dev.imexprobe.api;

import dev.imexprobe.cuda.HandleType;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** A handle type that must be FABRIC (the only kind that travels over HTTP); absent or blank passes. */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = FabricOnly.Check.class)
public @interface FabricOnly {

    /** Why only FABRIC; the value sent is appended as {@code , got '…'}. */
    String message();

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    final class Check implements ConstraintValidator<FabricOnly, String> {
        @Override
        public boolean isValid(String value, ConstraintValidatorContext context) {
            if (value == null || value.isBlank() || HandleType.parse(value) == HandleType.FABRIC) {
                return true;
            }
            context.disableDefaultConstraintViolation();
            context.buildConstraintViolationWithTemplate(context.getDefaultConstraintMessageTemplate()
                    + Wire.literal(", got '" + Wire.truncate(value) + "'")).addConstraintViolation();
            return false;
        }
    }
}
