package main

import "github.com/gin-gonic/gin"

// apiHandler is a handler that returns its failure instead of writing it;
// handle turns it into a gin handler that records the failure with
// c.Error for the errors middleware (observe.go) to answer.
type apiHandler func(c *gin.Context) error

// handle adapts h to gin.
func handle(h apiHandler) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			fail(c, err)
		}
	}
}

// needsDB is h when its database is configured, and otherwise a handler
// that answers 503 "database not configured".
func needsDB(configured bool, h apiHandler) gin.HandlerFunc {
	if !configured {
		return handle(func(*gin.Context) error { return errNotConfigured })
	}
	return handle(h)
}
