-- sku: the source's table. The index on sku_id is in index.sql.
CREATE TABLE purch_sku_master (
    id       bigint       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    mem_id   int          NOT NULL,
    mem_code varchar(32)  NOT NULL,
    sku_id   bigint       NOT NULL,
    sku_code varchar(32)  NOT NULL,
    item     varchar(64)  NOT NULL,
    sku_name varchar(128) NOT NULL,
    sku_abbr varchar(64)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
