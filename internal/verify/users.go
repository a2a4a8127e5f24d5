package verify

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// usersFixture holds the user the users checks create first.
type usersFixture struct {
	mu    sync.Mutex
	id    int64
	email string
}

func (fx *usersFixture) ready() error {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	if fx.id == 0 {
		return errors.New("needs the user of users/create user, which was not created")
	}
	return nil
}

// locationRE matches the Location header of a 201.
var locationRE = regexp.MustCompile(`^/user/([0-9]+)$`)

// created checks a 201 of POST /user and, if storedAs is set, that
// GET Location returns that email and no password. It needs the session,
// so it is a check, not a row.
func created(name string, req request, storedAs string, fx *usersFixture) check {
	return check{workload: "users", name: "users/" + name, run: func(ctx context.Context, s *session) error {
		id, err := s.create(ctx, req)
		if err != nil {
			return err
		}
		if fx != nil {
			fx.mu.Lock()
			fx.id, fx.email = id, storedAs
			fx.mu.Unlock()
		}
		if storedAs == "" {
			return nil
		}
		return s.readUser(ctx, id, storedAs)
	}}
}

// createUser posts body, expects a 201 with its Location and returns the id.
func (s *session) createUser(ctx context.Context, body string) (int64, error) {
	return s.create(ctx, post("/user", body))
}

// create sends req, expects a 201 with its Location and returns the id.
func (s *session) create(ctx context.Context, req request) (int64, error) {
	resp := s.do(ctx, req)
	if err := (row{status: []int{201}, body: fields(map[string]any{"id": anyID, "message": "User created"})}).expect(resp); err != nil {
		return 0, err
	}
	m, _ := resp.object()
	id, _ := integer(m["id"])
	loc := resp.header.Get("Location")
	sm := locationRE.FindStringSubmatch(loc)
	if sm == nil {
		return 0, fmt.Errorf("Location %q, want /user/%d", loc, id)
	}
	if n, _ := strconv.ParseInt(sm[1], 10, 64); n != id {
		return 0, fmt.Errorf("Location %q names another id than the body's %d", loc, id)
	}
	return id, nil
}

// readUser expects GET /user/{id} to return email and no password.
func (s *session) readUser(ctx context.Context, id int64, email string) error {
	resp := s.do(ctx, get(fmt.Sprintf("/user/%d", id)))
	if err := (row{status: []int{200}, body: fields(map[string]any{"id": id, "email": email})}).expect(resp); err != nil {
		return fmt.Errorf("GET /user/%d: %v", id, err)
	}
	m, _ := resp.object()
	for k := range m {
		if strings.Contains(strings.ToLower(k), "password") {
			return fmt.Errorf("GET /user/%d returns the field %q: never the password", id, k)
		}
	}
	return nil
}

func usersStages(t Target) []stage {
	fx := &usersFixture{}
	// unique keeps emails apart across runs against the same database.
	unique := strconv.FormatInt(time.Now().UnixNano(), 36)
	email := "verify-" + unique + "@example.com"
	cp255 := strings.Repeat("😀", 253) + "@x" // 255 code points, 1014 bytes
	cp256 := strings.Repeat("a", 254) + "@x" // 256 code points
	inj := `x'); DROP TABLE users; --@example.com`
	user := func(email, password string) string {
		return fmt.Sprintf(`{"email":%q,"password":%q}`, email, password)
	}
	signup := func(email, password string) request { return post("/user", user(email, password)) }
	setup := fixed(
		created("create user -> 201 Location {id,message}, then GET it", signup(email, "secret"), email, fx),
	)
	more := fixed(
		created("email of 255 code points (1014 bytes) -> 201", signup(cp255, "p"), cp255, nil),
		created("password of 255 code points -> 201", signup("p255-"+unique+"@x", strings.Repeat("ß", 255)), "p255-"+unique+"@x", nil),
		created("unicode email stored verbatim -> 201", signup("straße-"+unique+"@bücher.de", "pässwörd"), "straße-"+unique+"@bücher.de", nil),
		created("SQL injection in email stored verbatim -> 201", signup(inj, "x' OR '1'='1"), inj, nil),
		created("unknown fields ignored -> 201", post("/user", `{"id":1,"admin":true,"email":"u-`+unique+`@x","password":"p","x":[{}]}`), "u-"+unique+"@x", nil),
		created("no Content-Type -> 201", request{method: "POST", path: "/user", body: []byte(user("noct-"+unique+"@x", "p")), noCT: true}, "noct-"+unique+"@x", nil),
		created("Content-Type text/plain -> 201", request{method: "POST", path: "/user", body: []byte(user("ct-"+unique+"@x", "p")), header: [][2]string{{"Content-Type", "text/plain"}}}, "ct-"+unique+"@x", nil),
		check{workload: "users", name: "users/duplicate email key -> last wins or 400", run: func(ctx context.Context, s *session) error {
			resp := s.do(ctx, post("/user", `{"email":"first@x","password":"p","email":"last-`+unique+`@x"}`))
			if err := (row{status: []int{201, 400}}).expect(resp); err != nil || resp.status == 400 {
				return err
			}
			m, _ := resp.object()
			id, ok := integer(m["id"])
			if !ok {
				return fmt.Errorf("201 body without an id: %s", trunc(string(resp.body), 200))
			}
			return s.readUser(ctx, id, "last-"+unique+"@x")
		}},
	)
	table := func() []check {
		id := fx.id
		rs := usersRows(id, cp256)
		for i := range rs {
			if strings.Contains(rs[i].name, "{id}") {
				rs[i].needs = fx.ready
			}
		}
		return rows("users", rs)
	}
	after := fixed(
		check{workload: "users", name: "users/table still there after SQL injection", run: func(ctx context.Context, s *session) error {
			if err := fx.ready(); err != nil {
				return skipError(err.Error())
			}
			if err := s.readUser(ctx, fx.id, fx.email); err != nil {
				return err
			}
			_, err := s.createUser(ctx, user("after-"+unique+"@x", "p"))
			return err
		}},
		keepAliveCheck("users", "keep-alive: 400 and 404 then 200 on one connection", fx.ready, func() []step {
			return []step{
				{post("/user", `{"email":"nobody","password":"`+strings.Repeat("p", 3000)+`"}`), 400},
				{get(fmt.Sprintf("/user/%d", fx.id)), 200},
				{get(fmt.Sprintf("/user/%d", maxID)), 404},
				{post("/user", `{"email":`), 400},
				{get(fmt.Sprintf("/user/%d", fx.id)), 200},
			}
		}),
		check{workload: "users", name: "users/rejected sign-ups leave no row", run: func(ctx context.Context, s *session) error {
			return checkNoRowLeft(ctx, s, unique)
		}},
		check{workload: "users", name: "users/concurrent sign-ups get distinct ids and rows", run: checkUsersConcurrency},
		healthyAfter("users", func() (request, error) {
			if err := fx.ready(); err != nil {
				return request{}, err
			}
			return get(fmt.Sprintf("/user/%d", fx.id)), nil
		}),
		routeLabelCheck("users", "/user/{id}", func() (request, error) { return get(fmt.Sprintf("/user/%d", maxID)), nil }),
		routeLabelCheck("users", "/user", func() (request, error) { return post("/user", `{}`), nil }),
	)
	return []stage{setup, more, table, after}
}

func usersRows(id int64, cp256 string) []row {
	bad := []int{400}
	ID := strconv.FormatInt(id, 10)
	u := func(path string) request { return get("/user/" + path) }
	p := func(body string) request { return post("/user", body) }
	big := `{"email":"a@b.c","password":"` + strings.Repeat("x", 2<<20) + `"}`
	return []row{
		// Reading.
		{name: "GET /user/{id} zero-padded to 16 digits -> 200", req: u(fmt.Sprintf("%016d", id)), status: []int{200}, body: fields(map[string]any{"id": id})},
		{name: "GET /user/{id} of 17 digits -> 400", req: u(fmt.Sprintf("%017d", id)), status: bad},
		{name: "GET unknown user 2^53-1 -> 404", req: u(strconv.FormatInt(maxID, 10)), status: []int{404}},
		{name: "GET user 2^53 -> 400", req: u("9007199254740992"), status: bad},
		{name: "GET user 2^64 -> 400", req: u("18446744073709551616"), status: bad},
		{name: "GET user 0 -> 400", req: u("0"), status: bad},
		{name: "GET user -1 -> 400", req: u("-1"), status: bad},
		{name: "GET user abc -> 400", req: u("abc"), status: bad},
		{name: "GET user 1.5 -> 400", req: u("1.5"), status: bad},
		{name: "GET user 1e3 -> 400", req: u("1e3"), status: bad},
		{name: "GET user 0x1 -> 400", req: u("0x1"), status: bad},
		{name: "GET user Infinity -> 400", req: u("Infinity"), status: bad},
		{name: "GET user in fullwidth digits -> 400", req: u("%EF%BC%91"), status: bad},
		{name: "GET user with SQL -> 400", req: u("1;DROP%20TABLE%20users"), status: bad},
		{name: "GET user with a quote -> 400", req: u("1%27%20OR%20%271%27=%271"), status: bad},
		{name: "GET user ..%2f..%2fetc%2fpasswd -> 400 or 404", req: u("..%2f..%2fetc%2fpasswd"), status: []int{400, 404}},
		{name: "GET /user/../health -> 404", req: get("/user/../health"), status: []int{404}},
		{name: "GET /user/{id}/ -> 404", req: u(ID + "/"), status: []int{404}},
		{name: "GET /user -> 405", req: get("/user"), status: []int{405}, allow: "POST"},
		{name: "PUT /user/{id} -> 405", req: request{method: "PUT", path: "/user/" + ID, body: []byte(`{}`)}, status: []int{405}, allow: "GET"},
		{name: "DELETE /user/{id} -> 405", req: request{method: "DELETE", path: "/user/" + ID}, status: []int{405}, allow: "GET"},
		// Creating: each of these must leave no row (the harness audits count(*)).
		{name: "email missing -> 400", req: p(`{"password":"p"}`), status: bad},
		{name: "password missing -> 400", req: p(`{"email":"a@b.c"}`), status: bad},
		{name: "email empty -> 400", req: p(`{"email":"","password":"p"}`), status: bad},
		{name: "password empty -> 400", req: p(`{"email":"a@b.c","password":""}`), status: bad},
		{name: "email without @ -> 400", req: p(`{"email":"nobody.example.com","password":"p"}`), status: bad},
		{name: "email of 256 code points -> 400", req: p(fmt.Sprintf(`{"email":%q,"password":"p"}`, cp256)), status: bad},
		{name: "password of 256 code points -> 400", req: p(`{"email":"a@b.c","password":"` + strings.Repeat("😀", 256) + `"}`), status: bad},
		{name: "email number -> 400", req: p(`{"email":1,"password":"p"}`), status: bad},
		{name: "email beyond 2^63 -> 400", req: p(`{"email":92233720368547758080,"password":"p"}`), status: bad},
		{name: "email null -> 400", req: p(`{"email":null,"password":"p"}`), status: bad},
		{name: "email array -> 400", req: p(`{"email":["a@b.c"],"password":"p"}`), status: bad},
		{name: "password true -> 400", req: p(`{"email":"a@b.c","password":true}`), status: bad},
		{name: "password object -> 400", req: p(`{"email":"a@b.c","password":{}}`), status: bad},
		{name: "email holds U+0000 -> 400", req: p(`{"email":"a\u0000@b.c","password":"p"}`), status: bad},
		{name: "password holds U+0000 -> 400", req: p(`{"email":"a@b.c","password":"\u0000"}`), status: bad},
		{name: "body array -> 400", req: p(`[{"email":"a@b.c","password":"p"}]`), status: bad},
		{name: "body null -> 400", req: p(`null`), status: bad},
		{name: "body string -> 400", req: p(`"a@b.c"`), status: bad},
		{name: "empty body -> 400", req: p(``), status: bad},
		{name: "truncated body -> 400", req: p(`{"email":"a@b.c","passw`), status: bad},
		{name: "trailing garbage -> 400", req: p(`{"email":"a@b.c","password":"p"}}`), status: bad},
		{name: "duplicate email key, the last one without @ -> 400", req: p(`{"email":"a@b.c","password":"p","email":"nobody"}`), status: bad},
		{name: "2 MiB body -> 413", req: p(big), status: []int{413}},
		// Unpinned: any non-5xx; PostgreSQL cannot store a lone surrogate.
		{name: "lone surrogate in email -> 201 or 400", req: p(`{"email":"\ud800@b.c","password":"p"}`), status: []int{201, 400}},
		{name: "invalid UTF-8 in password -> 201 or 400", req: p("{\"email\":\"utf8@b.c\",\"password\":\"\xc3\x28\xff\"}"), status: []int{201, 400}},
	}
}

// checkNoRowLeft proves that answers other than 201 insert nothing: it
// creates a user, sends sign-ups the contract rejects, creates another,
// and finds no readable user between the two ids. (Ids may have gaps, if
// a rejected insert consumed a sequence value; rows may not.)
func checkNoRowLeft(ctx context.Context, s *session, unique string) error {
	first, err := s.createUser(ctx, fmt.Sprintf(`{"email":"before-%s@x","password":"p"}`, unique))
	if err != nil {
		return err
	}
	for _, body := range []string{
		`{"email":"nobody","password":"p"}`,
		`{"email":"a@b.c","password":""}`,
		`{"email":"` + strings.Repeat("a", 254) + `@x","password":"p"}`,
		`{"email":"a@b.c","password":"` + strings.Repeat("p", 256) + `"}`,
		`{"email":"a\u0000@b.c","password":"p"}`,
		`{"email":"a@b.c","password":"p\u0000"}`,
		`{"email":"a@b.c","password":1}`,
		`{"email":"a@b.c"}`,
	} {
		resp := s.do(ctx, post("/user", body))
		if err := (row{status: []int{400}}).expect(resp); err != nil {
			return err
		}
	}
	last, err := s.createUser(ctx, fmt.Sprintf(`{"email":"after-%s@x","password":"p"}`, unique))
	if err != nil {
		return err
	}
	if last <= first {
		return fmt.Errorf("the second user got id %d, not above the first's %d", last, first)
	}
	for id := first + 1; id < last && id <= first+100; id++ {
		resp := s.do(ctx, get(fmt.Sprintf("/user/%d", id)))
		if resp.none || resp.status != 404 {
			return fmt.Errorf("user %d, created between the users %d and %d around rejected sign-ups only, reads %s: a rejected sign-up left a row (or another client was signing up)", id, first, last, firstLine(resp.dump()))
		}
	}
	return nil
}
