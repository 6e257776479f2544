-- A message id is unique within its thread (clients name their own messages; two threads may
-- use one id), and a run's messages keep the id of the task that run answered with, so a
-- message posted again is answered as it was the first time. SQLite cannot change a
-- column's constraint in place: the table is rebuilt, keeping every row and its `seq`.
CREATE TABLE messages_by_thread (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL,
    metadata TEXT,
    task_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (org_id, thread_id, id),
    FOREIGN KEY (org_id, thread_id) REFERENCES threads(org_id, id) ON DELETE CASCADE
);
INSERT INTO messages_by_thread
    (seq, id, org_id, thread_id, role, parts, metadata, created_at, updated_at)
    SELECT seq, id, org_id, thread_id, role, parts, metadata, created_at, updated_at
    FROM messages;
DROP TABLE messages;
ALTER TABLE messages_by_thread RENAME TO messages;
CREATE INDEX messages_thread ON messages(org_id, thread_id, seq);
