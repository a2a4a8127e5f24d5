package main

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
)

// The users statements, verbatim from workloads/users/queries.sql.
const (
	sqlCreateUser = `INSERT INTO users (email, password) VALUES ($1, $2) RETURNING id`
	sqlGetUser    = `SELECT id, email FROM users WHERE id = $1`
)

// users serves sign-ups on PostgreSQL.
type users struct {
	db *postgres // nil when DATABASE_URL is unset
}

func (u users) register(r gin.IRoutes) {
	r.POST("/user", needsDB(u.db != nil, u.create))
	r.GET("/user/:id", needsDB(u.db != nil, u.get))
}

// createdBody is the answer of POST /user.
type createdBody struct {
	ID      int64  `json:"id"`
	Message string `json:"message"`
}

// userBody is the answer of GET /user/{id}: never the password.
type userBody struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
}

func (u users) create(c *gin.Context) (err error) {
	obj, err := readObject(c)
	if err != nil {
		return err
	}
	email, err := boundedString(obj, "email")
	if err != nil {
		return err
	}
	if !strings.Contains(email, "@") {
		return badRequest(`field "email" must contain "@"`)
	}
	password, err := boundedString(obj, "password")
	if err != nil {
		return err
	}
	conn, ctx, done, err := u.db.acquire(c.Request.Context())
	if err != nil {
		return err
	}
	defer done()
	var id int64
	if err := conn.QueryRow(ctx, sqlCreateUser, email, password).Scan(&id); err != nil {
		return err
	}
	c.Header("Location", "/user/"+strconv.FormatInt(id, 10))
	c.JSON(http.StatusCreated, createdBody{id, "User created"})
	return nil
}

// boundedString reads a users string field: non-empty, free of U+0000 and
// at most 255 code points (the varchar(255) columns).
func boundedString(obj object, name string) (string, error) {
	s, err := obj.string(name)
	if err != nil {
		return "", err
	}
	if n := utf8.RuneCountInString(s); n > maxStringRunes {
		return "", badRequest("field %q is %d code points long, over %d", name, n, maxStringRunes)
	}
	return s, nil
}

func (u users) get(c *gin.Context) (err error) {
	id, err := pathInt(c, "id", 1, maxID)
	if err != nil {
		return err
	}
	conn, ctx, done, err := u.db.acquire(c.Request.Context())
	if err != nil {
		return err
	}
	defer done()
	var body userBody
	err = conn.QueryRow(ctx, sqlGetUser, id).Scan(&body.ID, &body.Email)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("user not found")
	}
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, body)
	return nil
}
