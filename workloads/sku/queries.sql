-- The statement every sku implementation runs, verbatim.

-- name: get_sku
-- params: sku_id
SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?
