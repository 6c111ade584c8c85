-- MySQL dialect: every statement, rendered by golden_test.go (go test ./dbop -run Golden -update)

-- Status (one COM_QUERY)
SELECT VERSION(), @@server_id, @@read_only, @@super_read_only, @@server_uuid, @@gtid_executed, '', '', '';
SHOW REPLICA STATUS;
SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync%';
SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl_semi_sync%' OR Variable_name = 'Ssl_server_not_after';

-- SetReadOnly
SET GLOBAL super_read_only = ON;

-- SetWritable
SET GLOBAL super_read_only = OFF, GLOBAL read_only = OFF;

-- ChangeSource
CHANGE REPLICATION SOURCE TO SOURCE_HOST = ?, SOURCE_PORT = ?, SOURCE_USER = ?, SOURCE_PASSWORD = ?, SOURCE_AUTO_POSITION = 1, SOURCE_SSL = 1, SOURCE_SSL_CA = ?, SOURCE_SSL_VERIFY_SERVER_CERT = ?, GET_SOURCE_PUBLIC_KEY = 1, SOURCE_CONNECT_RETRY = ?, SOURCE_HEARTBEAT_PERIOD = ?;
--   args: "orders-0.orders.db.svc", 3306, "mysqlop-repl", <secret>, "/etc/mysql-operator/tls/ca.crt", 1, 1, 1

-- StartReplica
START REPLICA;

-- StopReplica
STOP REPLICA;

-- StopIOThread
STOP REPLICA IO_THREAD;

-- ResetReplica
RESET REPLICA ALL;

-- WaitForGTID
SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?);
--   args: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100", 30

-- EnableSemiSyncSource(2)
SET GLOBAL rpl_semi_sync_source_timeout = ?, GLOBAL rpl_semi_sync_source_wait_no_replica = ON, GLOBAL rpl_semi_sync_source_wait_point = 'AFTER_SYNC', GLOBAL rpl_semi_sync_source_wait_for_replica_count = ?, GLOBAL rpl_semi_sync_source_enabled = ON;
--   args: 4294967295, 2

-- DisableSemiSyncSource
SET GLOBAL rpl_semi_sync_source_enabled = OFF;

-- EnableSemiSyncReplica
SET GLOBAL rpl_semi_sync_replica_enabled = ON;

-- DisableSemiSyncReplica
SET GLOBAL rpl_semi_sync_replica_enabled = OFF;

-- SetGTIDSlavePos
-- error: gtid_slave_pos: not supported by this server family

-- SetGTIDBinlogState
-- error: gtid_binlog_state: not supported by this server family

-- CloneFrom
SET GLOBAL clone_valid_donor_list = ?;
--   args: "orders-1.orders.db.svc:3306"
CLONE INSTANCE FROM ?@?:? IDENTIFIED BY ? REQUIRE SSL;
--   args: "mysqlop-admin", "orders-1.orders.db.svc", 3306, <secret>

-- ResetBinlogs
RESET BINARY LOGS AND GTIDS;

-- Shutdown
SHUTDOWN;

-- ReloadTLS
ALTER INSTANCE RELOAD TLS;

-- ListConnections
SELECT ID, IFNULL(USER, ''), IFNULL(HOST, ''), IFNULL(COMMAND, '') FROM performance_schema.processlist WHERE ID <> CONNECTION_ID();

-- KillConnection
KILL CONNECTION ?;
--   args: 42

-- Heartbeat
CREATE DATABASE IF NOT EXISTS mysql_operator;
CREATE TABLE IF NOT EXISTS mysql_operator.heartbeat (id TINYINT UNSIGNED PRIMARY KEY, at TIMESTAMP(6) NOT NULL);
REPLACE INTO mysql_operator.heartbeat VALUES (1, NOW(6));

-- BinaryLogs
SHOW BINARY LOGS;

-- BinaryLogDir
SELECT @@log_bin_basename;

-- RotateBinaryLog
FLUSH NO_WRITE_TO_BINLOG BINARY LOGS;

-- Counters
SHOW GLOBAL STATUS WHERE Variable_name IN ('Uptime', 'Questions', 'Threads_connected', 'Innodb_buffer_pool_pages_total', 'Innodb_buffer_pool_pages_free', 'Innodb_buffer_pool_pages_data', 'Innodb_page_size');

-- CreateDatabase
CREATE DATABASE IF NOT EXISTS `shop``s_db%` CHARACTER SET = ? COLLATE = ?;
--   args: "utf8mb4", "utf8mb4_unicode_ci"

-- AlterDatabase
ALTER DATABASE `shop``s_db%` COLLATE = ?;
--   args: "utf8mb4_bin"

-- DropDatabase
DROP DATABASE IF EXISTS `shop``s_db%`;

-- Database
SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?;
--   args: "shop`s_db%"

-- CreateUser
CREATE USER ?@? IDENTIFIED BY ? REQUIRE SSL WITH MAX_USER_CONNECTIONS ?;
--   args: "o'app", "10.0.%", <secret>, 20

-- AlterUser (password)
ALTER USER ?@? IDENTIFIED BY ? REQUIRE NONE WITH MAX_USER_CONNECTIONS ?;
--   args: "o'app", "10.0.%", <secret>, 0

-- AlterUser (attributes)
ALTER USER ?@? REQUIRE NONE WITH MAX_USER_CONNECTIONS ?;
--   args: "o'app", "10.0.%", 0

-- AlterUser (X.509 subject)
ALTER USER ?@? REQUIRE SUBJECT ? WITH MAX_USER_CONNECTIONS ?;
--   args: "o'app", "10.0.%", "/CN=o'app/O=shop", 0

-- DropUser
DROP USER IF EXISTS ?@?;
--   args: "o'app", "10.0.%"

-- User
SELECT max_user_connections, ssl_type, CAST(x509_subject AS CHAR) FROM mysql.user WHERE User = ? AND Host = ?;
--   args: "o'app", "10.0.%"

-- Grants
SHOW GRANTS FOR ?@?;
--   args: "o'app", "10.0.%"

-- GrantPrivileges (database)
GRANT ALL PRIVILEGES, INSERT, SELECT ON `shop``s\_db\%`.* TO ?@? WITH GRANT OPTION;
--   args: "o'app", "10.0.%"

-- GrantPrivileges (table)
GRANT SELECT ON `shop`.`or``ders` TO ?@?;
--   args: "o'app", "10.0.%"

-- RevokePrivileges
REVOKE ALL PRIVILEGES, INSERT, SELECT ON `shop``s\_db\%`.* FROM ?@?;
--   args: "o'app", "10.0.%"
REVOKE GRANT OPTION ON `shop``s\_db\%`.* FROM ?@?;
--   args: "o'app", "10.0.%"

-- GrantPrivileges (DELETE HISTORY)
-- error: unknown or disallowed privilege "DELETE HISTORY"

