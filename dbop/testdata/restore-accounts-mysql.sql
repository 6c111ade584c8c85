-- mysql-operator restored accounts (MySQL): --init-file=<this file>
SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '');
SET sql_log_bin = 0;
ALTER USER 'root'@'localhost' IDENTIFIED BY 'r00t\'pw\\x';
DROP USER IF EXISTS 'root'@'%';
CREATE USER 'root'@'%' IDENTIFIED BY 'r00t\'pw\\x';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
DROP USER IF EXISTS 'mysqlop-admin'@'%';
CREATE USER 'mysqlop-admin'@'%' IDENTIFIED BY 'adm;in\npw';
GRANT ALL PRIVILEGES ON *.* TO 'mysqlop-admin'@'%' WITH GRANT OPTION;
DROP USER IF EXISTS 'mysqlop-repl'@'%';
CREATE USER 'mysqlop-repl'@'%' IDENTIFIED BY 'repl-pw';
GRANT REPLICATION SLAVE ON *.* TO 'mysqlop-repl'@'%';
DROP USER IF EXISTS 'mysqlop-agent'@'localhost';
CREATE USER 'mysqlop-agent'@'localhost' IDENTIFIED BY 'ag%ent_pw';
GRANT RELOAD, PROCESS, LOCK TABLES, REPLICATION CLIENT, BACKUP_ADMIN ON *.* TO 'mysqlop-agent'@'localhost';
GRANT SELECT ON performance_schema.* TO 'mysqlop-agent'@'localhost';
