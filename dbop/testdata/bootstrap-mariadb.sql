-- mysql-operator bootstrap (MariaDB): mariadb-install-db --extra-file=<this file>
SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '');
SET sql_log_bin = 0;
DELETE FROM mysql.global_priv WHERE NOT ((User = 'root' AND Host = 'localhost') OR (User = 'mariadb.sys' AND Host = 'localhost') OR (User = 'PUBLIC' AND Host = ''));
DELETE FROM mysql.proxies_priv WHERE NOT (User = 'root' AND Host = 'localhost');
DELETE FROM mysql.db WHERE User = '' OR Db = 'test' OR Db LIKE 'test\\_%';
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
GRANT RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR, SLAVE MONITOR ON *.* TO 'mysqlop-agent'@'localhost';
REVOKE READ_ONLY ADMIN ON *.* FROM 'root'@'localhost', 'root'@'%';
