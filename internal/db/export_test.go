package db

import (
	"context"
	"time"
)

// The tests' own ways in: options and a check that no command needs.

// HasSKUIndex reports whether purch_sku_master has an index on sku_id.
func HasSKUIndex(ctx context.Context, s Servers) (bool, error) {
	c, ok, err := connect(ctx, "sku", s)
	if err != nil || !ok {
		return false, err
	}
	defer c.close()
	names, err := skuIndexes(ctx, c)
	return len(names) > 0, err
}

// WithStartTimeout bounds how long the server may take to answer after each
// start (default DefaultStartTimeout).
func WithStartTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.startTimeout = d
		}
	}
}

// WithSetting passes one more server setting: `-c name=value` for
// PostgreSQL, `--name=value` for MariaDB. Later settings override earlier
// ones and showdown's own.
func WithSetting(name, value string) Option {
	return func(o *options) { o.settings = append(o.settings, setting{name, value}) }
}
