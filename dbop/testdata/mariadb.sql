-- MariaDB dialect: every statement, rendered by golden_test.go (go test ./dbop -run Golden -update)

-- Status (one COM_QUERY)
SELECT VERSION(), @@server_id, @@read_only, 0, '', '', @@gtid_binlog_state, @@gtid_slave_pos, @@gtid_current_pos;
SHOW REPLICA STATUS;
SHOW GLOBAL VARIABLES LIKE 'rpl_semi_sync%';
SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Rpl_semi_sync%' OR Variable_name = 'Ssl_server_not_after';

-- SetReadOnly
SET GLOBAL read_only = ON;

-- SetWritable
SET GLOBAL read_only = OFF;

-- ChangeSource
SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_current_pos;
CHANGE MASTER TO MASTER_HOST = ?, MASTER_PORT = ?, MASTER_USER = ?, MASTER_PASSWORD = ?, MASTER_USE_GTID = slave_pos, MASTER_SSL = ?, MASTER_SSL_CA = ?, MASTER_SSL_VERIFY_SERVER_CERT = ?, MASTER_CONNECT_RETRY = ?, MASTER_HEARTBEAT_PERIOD = ?;
--   args: "orders-0.orders.db.svc", 3306, "mysqlop-repl", <secret>, 1, "/etc/mysql-operator/tls/ca.crt", 1, 1, 1

-- StartReplica
START REPLICA;

-- StopReplica
STOP REPLICA;

-- StopIOThread
STOP REPLICA IO_THREAD;

-- ResetReplica
RESET REPLICA ALL;

-- WaitForGTID
SELECT MASTER_GTID_WAIT(?, ?);
--   args: "0-1-100", 30

-- EnableSemiSyncSource(2)
SET GLOBAL rpl_semi_sync_master_timeout = ?, GLOBAL rpl_semi_sync_master_wait_no_slave = ON, GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_SYNC', GLOBAL rpl_semi_sync_master_enabled = ON;
--   args: 4294967295

-- DisableSemiSyncSource
SET GLOBAL rpl_semi_sync_master_enabled = OFF;

-- EnableSemiSyncReplica
SET GLOBAL rpl_semi_sync_slave_enabled = ON;

-- DisableSemiSyncReplica
SET GLOBAL rpl_semi_sync_slave_enabled = OFF;

-- SetGTIDSlavePos
SET GLOBAL gtid_slave_pos = ?;
--   args: "0-1-100,1-2-5"

-- SetGTIDBinlogState
SET GLOBAL gtid_binlog_state = ?;
--   args: "0-1-100,0-2-50,1-2-5"

-- CloneFrom
-- error: clone: not supported by this server family (seed with mariadb-backup)

-- ResetBinlogs
RESET MASTER;

-- Shutdown
SHUTDOWN;

-- ReloadTLS
FLUSH LOCAL SSL;

-- ListConnections
SELECT ID, IFNULL(USER, ''), IFNULL(HOST, ''), IFNULL(COMMAND, '') FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID();

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
GRANT DELETE HISTORY ON *.* TO ?@?;
--   args: "o'app", "%"

