package dev.imexprobe.web;

import dev.imexprobe.agent.AgentConfiguration.AgentSignatureHolder;
import dev.imexprobe.agent.AgentProperties;
import dev.imexprobe.mesh.ProbeRecorder;
import dev.imexprobe.probe.DriverExecutor;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationPredicate;

import jakarta.validation.Validator;

import org.apache.catalina.core.StandardHost;

import org.springframework.boot.tomcat.ConfigurableTomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.converter.HttpMessageConverters;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import tools.jackson.databind.json.JsonMapper;

/** Wires the web layer's filters and error pages; no logic here. */
@Configuration(proxyBeanMethods = false)
public class WebConfiguration implements WebMvcConfigurer {

    /** A GET route refuses a query parameter it does not take (KnownParameters says why). */
    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(new KnownParameters());
    }

    /** Request records are read by the contract's own reader, before Spring's JSON converter sees them. */
    @Override
    public void configureMessageConverters(HttpMessageConverters.ServerBuilder builder) {
        builder.addCustomConverter(new WireBodies.Converter());
    }

    /*
     * The filters' order. /probe and /v1/imports meet their own filters first, all at HIGHEST_PRECEDENCE, in the
     * order the beans are declared below (registered filters come before Boot's plain ones, such as its character
     * encoding filter, at the same order): RouteTimer, DriverWake, the import's auth, DirectRoutes. What DirectRoutes
     * answers never reaches Boot's character encoding and observation filters (the observation skips the two
     * anyway: RouteTimer times them), which took 0.06 ms of each side's request on a small VM (docs/performance.md,
     * session 2026-12-05 i). What it passes on goes through them to MVC as every other request does.
     */

    /** The probe's two requests timed into http.server.requests without the observation (RouteTimer says why). */
    @Bean
    FilterRegistrationBean<RouteTimer> routeTimer(MeterRegistry registry) {
        FilterRegistrationBean<RouteTimer> r = new FilterRegistrationBean<>(new RouteTimer(registry));
        r.setOrder(Ordered.HIGHEST_PRECEDENCE); // before the observation filter, whose predicate reads its mark
        r.addUrlPatterns(DirectRoutes.PROBE, DirectRoutes.IMPORTS);
        return r;
    }

    @Bean
    ObservationPredicate observedElsewhere() {
        return RouteTimer.observedElsewhere();
    }

    /** Before anything else on the probe's two requests: a driver worker woken while they are read (DriverWake). */
    @Bean
    FilterRegistrationBean<DriverWake> driverWake(DriverExecutor executor) {
        FilterRegistrationBean<DriverWake> r = new FilterRegistrationBean<>(new DriverWake(executor));
        r.setOrder(Ordered.HIGHEST_PRECEDENCE);
        r.addUrlPatterns(DirectRoutes.PROBE, DirectRoutes.IMPORTS);
        return r;
    }

    /** /v1/imports authenticated before DirectRoutes answers it (agentAuthFilter then passes it on: checked once). */
    @Bean
    FilterRegistrationBean<AgentAuthFilter> importAuthFilter(AgentSignatureHolder signature, AgentProperties properties) {
        FilterRegistrationBean<AgentAuthFilter> r = new FilterRegistrationBean<>(
                new AgentAuthFilter(signature.signature(), properties.auth().required()));
        r.setOrder(Ordered.HIGHEST_PRECEDENCE);
        r.addUrlPatterns(DirectRoutes.IMPORTS);
        return r;
    }

    /** /probe and /v1/imports answered without MVC's dispatch, after the auth filter (DirectRoutes says when). */
    @Bean
    FilterRegistrationBean<DirectRoutes> directRoutes(ProbeController probe, ImportController imports,
                                                      Problems problems, JsonMapper json,
                                                      Validator validator, ProbeRecorder recorder) {
        FilterRegistrationBean<DirectRoutes> r = new FilterRegistrationBean<>(
                new DirectRoutes(probe, imports, problems, json, validator, recorder));
        r.setOrder(Ordered.HIGHEST_PRECEDENCE);
        r.addUrlPatterns(DirectRoutes.PROBE, DirectRoutes.IMPORTS);
        return r;
    }

    /** The rest of /v1/*, after Boot's observation filter: a refusal there is counted in http.server.requests. */
    @Bean
    FilterRegistrationBean<AgentAuthFilter> agentAuthFilter(AgentSignatureHolder signature, AgentProperties properties) {
        FilterRegistrationBean<AgentAuthFilter> r = new FilterRegistrationBean<>(
                new AgentAuthFilter(signature.signature(), properties.auth().required()));
        r.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
        r.addUrlPatterns("/v1/*");
        return r;
    }

    /** Every request but the probe's two reads what /probe recorded after answering (RecordedFirst). */
    @Bean
    FilterRegistrationBean<RecordedFirst> recordedFirst(ProbeRecorder recorder) {
        FilterRegistrationBean<RecordedFirst> r = new FilterRegistrationBean<>(new RecordedFirst(recorder));
        r.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
        r.addUrlPatterns("/*");
        return r;
    }

    /** Actuator's bare 404s (an unknown health component) get a problem+json body like every other error. */
    @Bean
    FilterRegistrationBean<BodilessErrors> bodilessErrors() {
        FilterRegistrationBean<BodilessErrors> r = new FilterRegistrationBean<>(new BodilessErrors());
        r.setOrder(Ordered.HIGHEST_PRECEDENCE + 20);
        r.addUrlPatterns("/actuator/*");
        return r;
    }

    /** Tomcat's start of each request, for the probe's timeline events (RouteTimer.ParseStart). */
    @Bean
    WebServerFactoryCustomizer<ConfigurableTomcatWebServerFactory> parseStart() {
        return factory -> factory.addEngineValves(new RouteTimer.ParseStart());
    }

    /** Tomcat's own error answers (requests it refuses before mapping them) as problem+json, not HTML. */
    @Bean
    WebServerFactoryCustomizer<ConfigurableTomcatWebServerFactory> problemErrorReports() {
        return factory -> factory.addContextCustomizers(context -> {
            if (context.getParent() instanceof StandardHost host) {
                host.setErrorReportValveClass(ContainerErrors.Valve.class.getName());
            }
        });
    }
}
