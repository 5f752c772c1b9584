package dev.imexprobe.json;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Spring Boot registers every JacksonModule bean with its JsonMapper: the same creators as {@link Json#MAPPER}. */
@Configuration(proxyBeanMethods = false)
public class JsonConfiguration {

    @Bean
    DirectCreators directCreators() {
        return new DirectCreators();
    }
}
