-- bank: clients and the ledger of every movement of money.
-- No foreign keys, as in the source; the harness audits the ledger instead.
CREATE TABLE client (
    id      bigserial PRIMARY KEY,
    balance bigint    NOT NULL CHECK (balance >= 0)
);

CREATE TABLE transaction (
    id             bigserial PRIMARY KEY,
    from_client_id bigint,             -- NULL for a deposit
    to_client_id   bigint NOT NULL,
    amount         bigint NOT NULL CHECK (amount > 0)
);
