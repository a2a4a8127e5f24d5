package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// SetSKUIndex gives purch_sku_master its index on sku_id (index.sql) or
// drops it, whatever it had before, then refreshes the table's statistics:
// the sku workload's database dimension (a plan's `sku_index: [false,
// true]`) switches between the source's full table scans and the fix on
// the same rows, without loading them again.
func SetSKUIndex(ctx context.Context, s Servers, on bool) error {
	c, ok, err := connect(ctx, "sku", s)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("sku: no database")
	}
	defer c.close()
	names, err := skuIndexes(ctx, c)
	if err != nil {
		return err
	}
	switch {
	case on && len(names) == 0:
		index, err := readSQL("sku", "index.sql")
		if err != nil {
			return err
		}
		if err := execFile(ctx, c, "sku", "index.sql", index); err != nil {
			return err
		}
	case !on:
		for _, n := range names {
			// The name comes from the server's own catalogue, not from input.
			if err := c.exec(ctx, "DROP INDEX `"+strings.ReplaceAll(n, "`", "``")+"` ON purch_sku_master"); err != nil {
				return fmt.Errorf("sku: drop index %s: %w", n, err)
			}
		}
	}
	if _, _, err := c.row(ctx, "ANALYZE TABLE purch_sku_master"); err != nil {
		return fmt.Errorf("sku: analyze: %w", err)
	}
	return nil
}

// skuIndexes names the indexes whose first column is sku_id.
func skuIndexes(ctx context.Context, c conn) ([]string, error) {
	_, vals, err := c.row(ctx, "SELECT COALESCE(GROUP_CONCAT(DISTINCT index_name), '') FROM information_schema.statistics "+
		"WHERE table_schema = DATABASE() AND table_name = 'purch_sku_master' AND column_name = 'sku_id' AND seq_in_index = 1")
	if err != nil {
		return nil, fmt.Errorf("sku: list indexes: %w", err)
	}
	if len(vals) == 0 || vals[0] == "" {
		return nil, nil
	}
	return strings.Split(vals[0], ","), nil
}
