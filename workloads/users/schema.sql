-- users: the source's table, with a 64-bit key.
CREATE TABLE users (
    id       bigserial    PRIMARY KEY,
    email    varchar(255) NOT NULL,
    password varchar(255) NOT NULL
);
