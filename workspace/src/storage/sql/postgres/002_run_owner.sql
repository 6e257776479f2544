-- Run ownership: the server running a thread's run, and each live server's lease.
ALTER TABLE threads ADD COLUMN run_owner TEXT;
CREATE TABLE workspace_servers (
    id TEXT PRIMARY KEY,
    lease_until BIGINT NOT NULL
);
