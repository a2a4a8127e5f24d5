package main

import (
	"database/sql"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
)

// sqlGetSKU is the sku statement, verbatim from workloads/sku/queries.sql.
const sqlGetSKU = `SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?`

// sku serves the read-heavy lookup on MariaDB/MySQL.
type sku struct {
	db   *mysqlDB      // nil when MYSQL_URL is unset
	stmt *preparedStmt // the sku statement on db
}

func newSKU(db *mysqlDB) sku {
	if db == nil {
		return sku{}
	}
	return sku{db, &preparedStmt{db: db.db, query: sqlGetSKU}}
}

func (s sku) register(r gin.IRoutes) {
	r.GET("/sku/:sku_id", needsDB(s.stmt != nil, s.get))
}

// skuBody is one purch_sku_master row.
type skuBody struct {
	ID      int64  `json:"id"`
	MemID   int64  `json:"mem_id"`
	MemCode string `json:"mem_code"`
	SKUID   int64  `json:"sku_id"`
	SKUCode string `json:"sku_code"`
	Item    string `json:"item"`
	SKUName string `json:"sku_name"`
	SKUAbbr string `json:"sku_abbr"`
}

func (s sku) get(c *gin.Context) error {
	skuID, err := pathInt(c, "sku_id", 1, maxID)
	if err != nil {
		return err
	}
	ctx, done, err := s.db.acquire(c.Request.Context(), s.db.limits.acquire, s.db.limits.query)
	if err != nil {
		return err
	}
	defer done()
	stmt, err := s.stmt.get(ctx)
	if err != nil {
		return err
	}
	var b skuBody
	err = stmt.QueryRowContext(ctx, skuID).Scan(&b.ID, &b.MemID, &b.MemCode, &b.SKUID, &b.SKUCode, &b.Item, &b.SKUName, &b.SKUAbbr)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("sku not found")
	}
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, b)
	return nil
}
