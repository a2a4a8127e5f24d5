TRUNCATE client, transaction RESTART IDENTITY
