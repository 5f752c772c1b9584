package dev.imexprobe.agent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.properties.ConfigurationPropertiesBean;
import org.springframework.boot.context.properties.bind.Name;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.lang.reflect.Parameter;
import java.lang.reflect.RecordComponent;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Warns, once the agent is ready, of each {@code IMEXPROBE_*} environment variable that no setting read. Spring
 * ignores a misspelt one ({@code IMEXPROBE_MESH_INTERVALL=5s}) without a word and the agent runs on the default, which
 * an operator learns only from its behaviour. Every setting, bound or {@code @Value}, is read from the system
 * environment's map, so this puts a map that notes the names asked of it in that source's place before anything
 * reads it (Spring Boot then wraps it as it wraps the original): the names found are the variables read, and the
 * names asked for are those a misspelt one is compared with.
 */
public final class UnreadVariables implements ApplicationListener<ApplicationEvent>, Ordered {

    private static final Logger log = LoggerFactory.getLogger(UnreadVariables.class);
    private static final String PREFIX = "IMEXPROBE_";
    private static final Pattern VARIABLE = Pattern.compile("[A-Z0-9_]+");
    /** Read by the shim's loader (native/src/loader.c), not by Spring. */
    public static final Set<String> READ_OUTSIDE_SPRING = Set.of("IMEXPROBE_CUDA_LIBRARY", "IMEXPROBE_NVML_LIBRARY");
    /**
     * What Kubernetes sets for each Service of the namespace unless the pod turns service links off (the chart does):
     * a Service named {@code imexprobe} gives IMEXPROBE_SERVICE_HOST, IMEXPROBE_PORT_8080_TCP_ADDR and so on. Only
     * for a service whose {@code _SERVICE_HOST} is set too: a misspelt setting that ends in {@code _PORT} is named.
     */
    private static final String SERVICE_LINK = "_(SERVICE_HOST|SERVICE_PORT(_\\w+)?|PORT(_\\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)";

    private volatile Noting noting;

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE; // before Spring Boot's environment post-processors read or wrap the source
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (event instanceof ApplicationEnvironmentPreparedEvent prepared) {
            var sources = prepared.getEnvironment().getPropertySources();
            String name = StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME;
            if (noting == null && sources.get(name) instanceof SystemEnvironmentPropertySource env
                    && env.getSource() instanceof Map<String, Object> variables) {
                noting = new Noting(variables);
                sources.replace(name, new SystemEnvironmentPropertySource(name, noting));
            }
        } else if (event instanceof ApplicationReadyEvent ready && noting != null) {
            // off the ready event's thread: readiness is published after its listeners, and this takes ~30 ms cold
            Noting read = noting;
            Thread.ofPlatform().daemon().name("imexprobe-unread-variables").start(() -> warn(read, ready));
        }
    }

    private static void warn(Noting read, ApplicationReadyEvent ready) {
        // the binder asks only for the names it finds, so the settings' own names come from their records
        Set<String> known = new TreeSet<>(read.asked);
        try {
            ConfigurationPropertiesBean.getAll(ready.getApplicationContext()).values().forEach(bean ->
                    addVariables(known, bean.getAnnotation().prefix(), bean.getInstance().getClass()));
        } catch (RuntimeException e) {
            return; // the agent is already stopping: nothing left to warn of
        }
        for (String line : unread(read.keySet(), read.found, known)) {
            log.warn(line);
        }
    }

    /** The variable of each setting under {@code prefix} in a properties record, in both of {@link #variables}' forms. */
    public static void addVariables(Set<String> into, String prefix, Class<?> type) {
        if (!type.isRecord()) {
            into.addAll(variables(prefix));
            return;
        }
        RecordComponent[] components = type.getRecordComponents();
        // @Name sits on the canonical constructor's parameter, which is what the binder reads
        Parameter[] parameters;
        try {
            parameters = type.getDeclaredConstructor(Arrays.stream(components).map(RecordComponent::getType)
                    .toArray(Class<?>[]::new)).getParameters();
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("a record without its canonical constructor: " + type, e);
        }
        for (int i = 0; i < components.length; i++) {
            Name name = parameters[i].getAnnotation(Name.class);
            String key = name != null ? name.value()
                    : components[i].getName().replaceAll("([a-z0-9])([A-Z])", "$1-$2");
            addVariables(into, prefix + "." + key, components[i].getType());
        }
    }

    /**
     * The environment variables relaxed binding reads a property from: dots made underscores and dashes dropped
     * ({@code IMEXPROBE_DRIVER_CONTEXTLINGER}), or dashes made underscores too ({@code IMEXPROBE_DRIVER_CONTEXT_LINGER}).
     */
    public static Set<String> variables(String property) {
        String upper = property.toUpperCase(Locale.ROOT).replace('.', '_');
        return new TreeSet<>(List.of(upper.replace("-", ""), upper.replace('-', '_'))); // one name when no dash
    }

    /**
     * The variables, noting each name asked for and found: Spring Boot's binder reads a system environment
     * source's map directly, not through the source.
     */
    private static final class Noting extends AbstractMap<String, Object> {
        private final Map<String, Object> variables;
        private final Set<String> asked = ConcurrentHashMap.newKeySet();
        private final Set<String> found = ConcurrentHashMap.newKeySet();

        Noting(Map<String, Object> variables) {
            this.variables = variables;
        }

        @Override
        public Object get(Object key) {
            Object value = variables.get(key);
            note(key, value != null);
            return value;
        }

        @Override
        public boolean containsKey(Object key) {
            boolean contains = variables.containsKey(key);
            note(key, contains);
            return contains;
        }

        private void note(Object key, boolean present) {
            // a placeholder's default is asked for too (IMEXPROBE_CHANNEL_MODE:HOSTPATH): not a variable's name
            if (key instanceof String name && name.startsWith(PREFIX) && VARIABLE.matcher(name).matches()) {
                asked.add(name);
                if (present) {
                    found.add(name);
                }
            }
        }

        @Override
        public Set<Entry<String, Object>> entrySet() {
            return variables.entrySet();
        }

        @Override
        public Set<String> keySet() {
            return variables.keySet();
        }

        @Override
        public int size() {
            return variables.size();
        }
    }

    /**
     * One line per {@code IMEXPROBE_*} variable in {@code set} that is neither among {@code read} nor read outside
     * Spring: what it is, that it changes nothing, and the nearest of the {@code settings}' variables, if one is close.
     */
    static List<String> unread(Set<String> set, Set<String> read, Set<String> settings) {
        List<String> lines = new ArrayList<>();
        List<Pattern> services = set.stream().filter(n -> n.endsWith("_SERVICE_HOST"))
                .map(n -> Pattern.compile(Pattern.quote(n.substring(0, n.length() - "_SERVICE_HOST".length()))
                        + SERVICE_LINK)).toList();
        for (String name : new TreeSet<>(set)) {
            if (!name.startsWith(PREFIX) || read.contains(name) || READ_OUTSIDE_SPRING.contains(name)
                    || services.stream().anyMatch(p -> p.matcher(name).matches())) {
                continue;
            }
            String near = settings.stream().filter(a -> a.startsWith(PREFIX) && !a.equals(name))
                    .min(Comparator.comparingInt((String a) -> distance(a, name)).thenComparing(a -> a))
                    .filter(a -> distance(a, name) <= Math.max(2, name.length() / 8)).orElse(null);
            lines.add(name + " is set, but no setting of imexprobe reads it, so it changes nothing"
                    + (near == null ? "" : " (did you mean " + near + "?)")
                    + "; docs/deploy.md (Values overview) lists the settings and their variables");
        }
        return lines;
    }

    /** Levenshtein distance: misspellings are a letter or two off, or two letters swapped (2). */
    static int distance(String a, String b) {
        int[] row = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            row[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            int diagonal = row[0];
            row[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int above = row[j];
                row[j] = Math.min(Math.min(row[j] + 1, row[j - 1] + 1),
                        diagonal + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
                diagonal = above;
            }
        }
        return row[b.length()];
    }
}
