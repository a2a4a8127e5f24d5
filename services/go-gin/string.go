package main

import (
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// registerString serves the string workload, which needs no database.
func registerString(r gin.IRoutes) {
	r.POST("/uppercase", handle(uppercase))
	r.POST("/count", handle(count))
}

// stringResult is the answer of /uppercase.
type stringResult struct {
	V string `json:"v"`
}

// countResult is the answer of /count.
type countResult struct {
	V int `json:"v"`
}

func uppercase(c *gin.Context) error {
	s, err := readS(c)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, stringResult{toUpper(s)})
	return nil
}

func count(c *gin.Context) error {
	s, err := readS(c)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, countResult{utf8.RuneCountInString(s)})
	return nil
}

// readS reads the field s of the request object.
func readS(c *gin.Context) (string, error) {
	obj, err := readObject(c)
	if err != nil {
		return "", err
	}
	return obj.string("s")
}

// upperCasers recycles Unicode upper-casers: a cases.Caser keeps state and
// must not be shared between goroutines, and building one allocates.
var upperCasers = sync.Pool{New: func() any {
	c := cases.Upper(language.Und)
	return &c
}}

// toUpper applies Unicode's full, locale-independent upper-case mapping,
// SpecialCasing included ("straße" -> "STRASSE"). ASCII text, the common
// case, takes a byte loop instead of the Unicode tables.
func toUpper(s string) string {
	lower := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			c := upperCasers.Get().(*cases.Caser)
			defer upperCasers.Put(c)
			return c.String(s) // String resets the caser first
		}
		lower = lower || ('a' <= c && c <= 'z')
	}
	if !lower {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}
