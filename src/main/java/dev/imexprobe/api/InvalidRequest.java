package dev.imexprobe.api;

/** A request body that breaks the contract; the message is the problem's detail, worded for the caller. */
public final class InvalidRequest extends RuntimeException {

    public InvalidRequest(String detail) {
        super(detail, null, false, false);
    }
}
