package io.cairn.log;

/** Who is appending to a leader: a client (full validation) or a coordinator (may write control batches). */
public enum AppendOrigin {
    /** A producer through Produce; control batches are refused. */
    CLIENT,
    /** The group or transaction coordinator (markers, internal topics). */
    COORDINATOR
}
