package dev.showdown.quarkus;

/** ApiException is an error answer of the contract: an HTTP status and a message for a person. */
public final class ApiException extends RuntimeException {

    private final int status;

    /** ApiException creates an error answer with the given status and message. */
    public ApiException(int status, String message) {
        super(message, null, false, false); // control flow, not a bug: no stack trace
        this.status = status;
    }

    /** status is the HTTP status of the answer. */
    public int status() {
        return status;
    }

    /** badRequest is a 400 answer. */
    public static ApiException badRequest(String message) {
        return new ApiException(400, message);
    }

    /** notFound is a 404 answer. */
    public static ApiException notFound(String message) {
        return new ApiException(404, message);
    }
}
