CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE members (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    member_id TEXT NOT NULL REFERENCES members(id),
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    permissions TEXT NOT NULL,
    expires_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE TABLE connections (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    title TEXT NOT NULL,
    description TEXT,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    token_enc TEXT,
    headers_enc TEXT,
    header_names TEXT NOT NULL,
    tool_timeout_ms BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX connections_org ON connections(org_id, created_at);
CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    title TEXT NOT NULL,
    description TEXT,
    instructions TEXT,
    status TEXT NOT NULL,
    members TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX agents_org ON agents(org_id, created_at);
CREATE TABLE threads (
    org_id TEXT NOT NULL REFERENCES organizations(id),
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    virtual_mcp_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, id)
);
CREATE INDEX threads_updated ON threads(org_id, updated_at);
CREATE TABLE messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL,
    metadata TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    FOREIGN KEY (org_id, thread_id) REFERENCES threads(org_id, id) ON DELETE CASCADE
);
CREATE INDEX messages_thread ON messages(org_id, thread_id, seq);
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    org_id TEXT NOT NULL,
    at BIGINT NOT NULL,
    actor TEXT NOT NULL,
    surface TEXT NOT NULL,
    connection_id TEXT,
    tool TEXT NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms BIGINT NOT NULL,
    request_id TEXT NOT NULL
);
CREATE INDEX audit_org ON audit_log(org_id, seq);
