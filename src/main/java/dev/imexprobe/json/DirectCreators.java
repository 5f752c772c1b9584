package dev.imexprobe.json;

import tools.jackson.databind.BeanDescription;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.deser.ValueInstantiator;
import tools.jackson.databind.deser.ValueInstantiators;
import tools.jackson.databind.deser.std.StdValueInstantiator;
import tools.jackson.databind.introspect.AnnotatedWithParams;
import tools.jackson.databind.module.SimpleModule;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;

/**
 * Our records' creators called through a spread {@link MethodHandle} with {@code invokeExact}. Jackson 3 calls a
 * creator of two or more arguments (every record's canonical constructor) with {@code invokeWithArguments}, which
 * adapts the arguments on each call; under the agents' C1-only JIT that was a third of reading an
 * {@code ImportReply} (docs/performance.md, "Session 2026-12-05"). Same creator, same arguments, and a creator's
 * exception is handled as Jackson's own instantiator handles it, so every document reads and fails as before.
 * Only classes of this project, and only where Jackson chose a plain property-based creator; anything else keeps
 * Jackson's instantiator.
 */
public final class DirectCreators extends SimpleModule {

    private static final String OURS = "dev.imexprobe.";

    public DirectCreators() {
        super("imexprobe-direct-creators");
    }

    @Override
    public void setupModule(SetupContext context) {
        super.setupModule(context);
        context.addValueInstantiators(new ValueInstantiators.Base() {
            @Override
            public ValueInstantiator modifyValueInstantiator(DeserializationConfig config,
                                                             BeanDescription.Supplier description,
                                                             ValueInstantiator instantiator) {
                return direct(description.getBeanClass(), instantiator);
            }
        });
    }

    /** The direct instantiator for {@code type}, or {@code instantiator} itself where it does not apply. */
    static ValueInstantiator direct(Class<?> type, ValueInstantiator instantiator) {
        if (!type.getName().startsWith(OURS) || instantiator.getClass() != StdValueInstantiator.class
                || !instantiator.canCreateFromObjectWith()) {
            return instantiator;
        }
        StdValueInstantiator std = (StdValueInstantiator) instantiator;
        MethodHandle handle = spread(std.getWithArgsCreator());
        return handle == null ? instantiator : new Direct(std, handle);
    }

    /** {@code (Object[]) -> Object} over the creator, or null when it cannot be reached (Jackson's path stays). */
    private static MethodHandle spread(AnnotatedWithParams creator) {
        if (creator == null) {
            return null;
        }
        Member member = creator.getMember();
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(member.getDeclaringClass(),
                    MethodHandles.lookup());
            MethodHandle target;
            int arity;
            if (member instanceof Constructor<?> c) {
                target = lookup.unreflectConstructor(c);
                arity = c.getParameterCount();
            } else if (member instanceof Method m && Modifier.isStatic(m.getModifiers())) {
                target = lookup.unreflect(m);
                arity = m.getParameterCount();
            } else {
                return null;
            }
            return target.asSpreader(Object[].class, arity)
                    .asType(MethodType.methodType(Object.class, Object[].class));
        } catch (ReflectiveOperationException | IllegalArgumentException | SecurityException e) {
            return null;
        }
    }

    static final class Direct extends StdValueInstantiator {

        private final MethodHandle creator;

        Direct(StdValueInstantiator base, MethodHandle creator) {
            super(base);
            this.creator = creator;
        }

        @Override
        public Object createFromObjectWith(DeserializationContext context, Object[] args) {
            try {
                return (Object) creator.invokeExact(args);
            } catch (Exception e) {
                // As StdValueInstantiator: the creator's own exception, wrapped with the type and the arguments.
                return context.handleInstantiationProblem(_valueClass, args, rewrapCtorProblem(context, e));
            } catch (Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }
}
