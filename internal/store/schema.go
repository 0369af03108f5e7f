package store

// The store's SQLite file: one kubeevents recording per file, its schema described for
// users in docs/store.md (keep both in step, and raise schemaVersion with any change).
const (
	// applicationID marks the file as a kubeevents store ("kevs"): PRAGMA application_id.
	applicationID = 0x6b657673
	// schemaVersion is the version of the schema below: PRAGMA user_version.
	schemaVersion = 2
)

// An object's versions are numbered in a range of their own, from object<<versionBits
// up, so that the versions table, kept in the order of its ids, holds each object's
// versions together: one object's history reads a few pages in a row rather than a
// page for every version, written as they were among everyone else's (schema 2; bench/
// README.md "History store"). An object has room for 4 billion versions.
const versionBits = 32

// versionRange is the ids an object's versions may have.
func versionRange(object int64) (first, last int64) {
	return object << versionBits, object<<versionBits | (1<<versionBits - 1)
}

// createSchema creates the tables of a new store. Times are Unix nanoseconds (UTC).
const createSchema = `
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE resources (
	id         INTEGER PRIMARY KEY,
	"group"    TEXT NOT NULL,
	version    TEXT NOT NULL,
	resource   TEXT NOT NULL,
	kind       TEXT NOT NULL,
	namespaced INTEGER NOT NULL,
	dict       BLOB NOT NULL,
	UNIQUE ("group", version, resource)
);

CREATE TABLE objects (
	id        INTEGER PRIMARY KEY,
	resource  INTEGER NOT NULL REFERENCES resources,
	cluster   TEXT NOT NULL,
	namespace TEXT NOT NULL,
	name      TEXT NOT NULL,
	uid       TEXT NOT NULL,
	owners    TEXT,
	created   INTEGER,
	first     INTEGER NOT NULL,
	deleted   INTEGER
);
CREATE UNIQUE INDEX objects_name ON objects (resource, namespace, name, cluster, uid);

CREATE TABLE versions (
	id     INTEGER PRIMARY KEY,
	object INTEGER NOT NULL REFERENCES objects,
	time   INTEGER NOT NULL,
	type   TEXT NOT NULL,
	rv     TEXT NOT NULL,
	seq    INTEGER,
	"by"   TEXT,
	base   INTEGER,
	data   BLOB NOT NULL
);
CREATE INDEX versions_time ON versions (time);

CREATE TABLE chains (
	object INTEGER NOT NULL,
	id     INTEGER NOT NULL,
	start  INTEGER NOT NULL,
	"end"  INTEGER,
	PRIMARY KEY (object, id)
) WITHOUT ROWID;
CREATE INDEX chains_end ON chains ("end") WHERE "end" IS NOT NULL;

CREATE TABLE events (
	object    INTEGER PRIMARY KEY REFERENCES objects,
	kind      TEXT NOT NULL,
	namespace TEXT NOT NULL,
	name      TEXT NOT NULL,
	uid       TEXT NOT NULL,
	type      TEXT NOT NULL,
	reason    TEXT NOT NULL,
	message   TEXT NOT NULL,
	count     INTEGER NOT NULL,
	last      INTEGER NOT NULL
);
CREATE INDEX events_about ON events (namespace, name);
`
