package dev.imexprobe.api;

import jakarta.validation.Constraint;
import jakarta.validation.ConstraintValidator;
import jakarta.validation.ConstraintValidatorContext;
import jakarta.validation.Payload;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** A whole number in [min, max]; absent passes. The value sent is appended to the message as {@code , got N}. */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Constraint(validatedBy = Within.Check.class)
public @interface Within {

    String message();

    long min() default Long.MIN_VALUE;

    long max() default Long.MAX_VALUE;

    Class<?>[] groups() default {};

    Class<? extends Payload>[] payload() default {};

    final class Check implements ConstraintValidator<Within, Long> {
        private long min;
        private long max;

        @Override
        public void initialize(Within within) {
            this.min = within.min();
            this.max = within.max();
        }

        @Override
        public boolean isValid(Long value, ConstraintValidatorContext context) {
            if (value == null || value >= min && value <= max) {
                return true;
            }
            context.disableDefaultConstraintViolation();
            context.buildConstraintViolationWithTemplate(context.getDefaultConstraintMessageTemplate() + ", got "
                    + value).addConstraintViolation();
            return false;
        }
    }
}
