package io.github.idforge.client;

/**
 * The one exception of the idforge client: an error answered by a node, or
 * the client's own finding that no node answered or that a call is
 * malformed. {@link #code()} is a word of idforge's error vocabulary
 * ({@code unknown_key}, {@code retired}, {@code unavailable}, ...), the same
 * the HTTP API's {@code error.code} carries; {@link #retryable()} says
 * whether the same call may succeed later or on another node (the client has
 * already failed over as far as its retries allowed).
 */
public final class IdForgeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final boolean retryable;
    private final int httpStatus;
    private final String server;

    IdForgeException(ErrorCode code, boolean retryable, int httpStatus, String server, String message, Throwable cause) {
        super(message + " (" + code.wire() + (server == null ? "" : " from " + server) + ")", cause);
        this.code = code;
        this.retryable = retryable;
        this.httpStatus = httpStatus;
        this.server = server;
    }

    /** An error of the client itself, with the code's retryability. */
    IdForgeException(ErrorCode code, String message) {
        this(code, code.retryable(), 0, null, message, null);
    }

    /**
     * The error's code. A code this client does not know (from a newer
     * server) is {@link ErrorCode#INTERNAL}, its word in the message.
     */
    public ErrorCode code() {
        return code;
    }

    /**
     * Whether the same call may succeed on another node or a little later:
     * the node's state stood in the way (its store, clock, lease, a
     * shutdown, no answer at all), not the request.
     */
    public boolean retryable() {
        return retryable;
    }

    /** The HTTP status of the node's answer; 0 when no node answered. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The node that answered, null when none did. */
    public String server() {
        return server;
    }
}
