package dev.imexprobe.web;

import dev.imexprobe.api.InvalidRequest;
import dev.imexprobe.api.Wire;
import dev.imexprobe.api.WireRequest;

import org.springframework.core.MethodParameter;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.HttpOutputMessage;
import org.springframework.http.MediaType;
import org.springframework.http.converter.AbstractHttpMessageConverter;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.RequestBodyAdviceAdapter;

import java.io.IOException;
import java.lang.reflect.Type;

/**
 * How MVC reads a {@link WireRequest}: through {@link Wire#parse} (strict, the contract's own messages), whatever
 * the Content-Type, and an absent body as {@code {}} so that {@code @Valid} still checks what is required.
 */
@ControllerAdvice
public class WireBodies extends RequestBodyAdviceAdapter {

    @Override
    public boolean supports(MethodParameter parameter, Type targetType,
                            Class<? extends HttpMessageConverter<?>> converterType) {
        return targetType instanceof Class<?> c && WireRequest.class.isAssignableFrom(c);
    }

    @Override
    @SuppressWarnings("unchecked")
    public Object handleEmptyBody(Object body, HttpInputMessage inputMessage, MethodParameter parameter,
                                  Type targetType, Class<? extends HttpMessageConverter<?>> converterType) {
        return Wire.parse(null, (Class<? extends WireRequest>) targetType);
    }

    /** The converter, placed before Spring's JSON one (whose mapper ignores unknown fields). */
    public static final class Converter extends AbstractHttpMessageConverter<WireRequest> {

        public Converter() {
            super(MediaType.ALL);
        }

        @Override
        protected boolean supports(Class<?> clazz) {
            return WireRequest.class.isAssignableFrom(clazz);
        }

        @Override
        protected boolean canWrite(MediaType mediaType) {
            return false;
        }

        @Override
        protected WireRequest readInternal(Class<? extends WireRequest> clazz, HttpInputMessage in)
                throws IOException {
            byte[] body = in.getBody().readNBytes(Wire.MAX_BODY + 1);
            try {
                if (body.length > Wire.MAX_BODY) {
                    throw new InvalidRequest(Wire.tooLarge(in.getHeaders().getContentLength()));
                }
                return Wire.parse(body, clazz);
            } catch (InvalidRequest e) {
                throw new HttpMessageNotReadableException(e.getMessage(), e, in);
            }
        }

        @Override
        protected void writeInternal(WireRequest request, HttpOutputMessage out) {
            throw new UnsupportedOperationException("request bodies are only read");
        }
    }
}
