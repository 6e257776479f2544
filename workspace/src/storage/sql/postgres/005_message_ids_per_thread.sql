-- A message id is unique within its thread (clients name their own messages; two threads may
-- use one id), and a run's messages keep the id of the task that run answered with, so a
-- message posted again is answered as it was the first time.
ALTER TABLE messages DROP CONSTRAINT messages_id_key;
ALTER TABLE messages ADD CONSTRAINT messages_thread_message UNIQUE (org_id, thread_id, id);
ALTER TABLE messages ADD COLUMN task_id TEXT;
