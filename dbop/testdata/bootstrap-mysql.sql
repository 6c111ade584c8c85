-- mysql-operator bootstrap (MySQL): mysqld --initialize-insecure --init-file=<this file>
SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '');
SET sql_log_bin = 0;
DELETE FROM mysql.user WHERE User = '';
DROP DATABASE IF EXISTS test;
FLUSH PRIVILEGES;
ALTER USER 'root'@'localhost' IDENTIFIED BY 'r00t\'pw\\x';
CREATE USER 'root'@'%' IDENTIFIED BY 'r00t\'pw\\x';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
CREATE USER 'mysqlop-admin'@'%' IDENTIFIED BY 'adm;in\npw';
GRANT ALL PRIVILEGES ON *.* TO 'mysqlop-admin'@'%' WITH GRANT OPTION;
CREATE USER 'mysqlop-repl'@'%' IDENTIFIED BY 'repl-pw';
GRANT REPLICATION SLAVE ON *.* TO 'mysqlop-repl'@'%';
CREATE USER 'mysqlop-agent'@'localhost' IDENTIFIED BY 'ag%ent_pw';
GRANT RELOAD, PROCESS, LOCK TABLES, REPLICATION CLIENT, BACKUP_ADMIN ON *.* TO 'mysqlop-agent'@'localhost';
GRANT SELECT ON performance_schema.* TO 'mysqlop-agent'@'localhost';
