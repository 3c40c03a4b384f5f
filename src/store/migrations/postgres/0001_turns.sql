-- Durable turns (mcp-adapters): one row per turn, its document's bytes and
-- the columns workers share it by; the decisions recorded for its waits.
CREATE TABLE mcp_adapters_turns (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    version BIGINT NOT NULL,
    status TEXT NOT NULL,
    document BYTEA NOT NULL,
    waits TEXT NOT NULL,
    undecided BIGINT NOT NULL,
    worker TEXT,
    lease TEXT,
    lease_until BIGINT
);
CREATE INDEX mcp_adapters_turns_ready ON mcp_adapters_turns (status, undecided, seq);
CREATE TABLE mcp_adapters_decisions (
    turn_id TEXT NOT NULL REFERENCES mcp_adapters_turns (id) ON DELETE CASCADE,
    call_id TEXT NOT NULL,
    waits_for TEXT NOT NULL,
    decision TEXT NOT NULL,
    PRIMARY KEY (turn_id, call_id)
);
