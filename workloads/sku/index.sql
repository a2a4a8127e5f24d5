CREATE INDEX idx_purch_sku_master_sku_id ON purch_sku_master (sku_id);
