// Package dbop is the only package of the operator that issues SQL. The operator
// (and later the in-pod agent) reaches each instance through an Instance, obtained
// from a Pool, and calls operations: Status, SetReadOnly, ConfigureReplica,
// Promote, WaitForGTID, KillConnections, the GitOps database/user/grant
// statements, and so on. Decisions are not made here: package topology decides,
// from Status observations, what to call.
//
// # Dialects
//
// The statements of each server family are rendered by a Dialect: MySQL (8.4 and
// later) or MariaDB (10.11 and later). The dialect is chosen from the parsed
// SELECT VERSION() (ParseVersion, DialectFor), once per Instance, never by
// comparing version strings. Only MariaDB servers are available to the tests
// (Debian's MariaDB 10.11, started by internal/dbtest): the MariaDB statements run
// against real servers, while the MySQL statements are covered by golden files
// only (testdata/mysql.sql, testdata/bootstrap-mysql.sql; regenerate with
// go test ./dbop -run Golden -update and review the diff).
//
// # Safety of the SQL text
//
// No statement is built by splicing text: values are ? placeholders, interpolated
// by the driver (interpolateParams, escaped for the session's sql_mode; the
// server cannot prepare CHANGE MASTER, CREATE USER or GRANT). Identifiers go
// through QuoteIdentifier, and the literals of the bootstrap file, which the server
// reads itself, through QuoteString and QuoteAccount; these three functions are
// fuzz-tested and exercised on the real server with quotes, backticks, %,
// backslashes, newlines and non-ASCII text.
//
// Secrets never appear in errors: errors name the operation and the address
// ("change replication source on 10.0.0.5:3306: ..."), never the statement, and
// server messages of statements that carry a password are withheld (MariaDB error
// 1470 quotes the start of a too-long MASTER_PASSWORD).
//
// # Connections
//
// An Instance holds one *sql.DB bounded to 2 connections with an idle timeout
// and dial, read and write timeouts (Options). Status reads everything the
// decisions need in one round trip: one COM_QUERY carrying four statements
// (multiStatements), which is safe because no statement holds user text.
//
// # Accounts
//
// Bootstrap renders the file a new data directory runs once: binary logging off
// (no GTID), no anonymous or host-specific root accounts, no test database, root
// with its password on localhost and '%', and the operator's accounts: AdminUser
// (ALL PRIVILEGES WITH GRANT OPTION, which it needs to grant any database
// privilege to GitOps users, and the only account that keeps MariaDB's READ_ONLY
// ADMIN), ReplUser (REPLICATION SLAVE) and AgentUser (local; what readiness checks
// and mariadb-backup/xtrabackup need).
package dbop
