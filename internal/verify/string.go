package verify

import (
	"context"
	"fmt"
	"strings"
)

// stringStages checks POST /uppercase and POST /count.
func stringStages(t Target) []stage {
	cs := rows("string", stringRows())
	cs = append(cs,
		keepAliveCheck("string", "keep-alive: 400s then 200s on one connection", nil, func() []step {
			return []step{
				{post("/uppercase", `{"s":`+strings.Repeat(" ", 3000)+`GET /health HTTP/1.1`), 400},
				{post("/count", `{"s":"ab"}`), 200},
				{post("/count", `{"s":""}`), 400},
				{post("/uppercase", `{"s":"a"}`), 200},
				{get("/uppercase"), 405},
				{post("/count", `{"s":"abc"}`), 200},
			}
		}),
		healthyAfter("string", func() (request, error) { return post("/uppercase", `{"s":"still ok"}`), nil }),
		routeLabelCheck("string", "/uppercase", func() (request, error) { return post("/uppercase", `{"s":"x"}`), nil }),
		routeLabelCheck("string", "/count", func() (request, error) { return post("/count", `{"s":"x"}`), nil }),
	)
	return []stage{fixed(cs...)}
}

// upper is a body check for POST /uppercase.
func upper(v string) func(*response) error { return fields(map[string]any{"v": v}) }

// count is a body check for POST /count.
func count(n int) func(*response) error { return fields(map[string]any{"v": n}) }

func stringRows() []row {
	ok := []int{200}
	bad := []int{400}
	// exactly1MiB is a body of exactly 1,048,576 bytes: not over the limit.
	exactly1MiB := `{"s":"` + strings.Repeat("a", 1<<20-8) + `"}`
	big := `{"s":"` + strings.Repeat("a", 2<<20) + `"}`
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	deepField := `{"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `,"s":"a"}`
	return []row{
		// The happy paths.
		{name: "uppercase hello -> 200 HELLO", req: post("/uppercase", `{"s":"hello"}`), status: ok, body: upper("HELLO")},
		{name: "count hello -> 200 5", req: post("/count", `{"s":"hello"}`), status: ok, body: count(5)},
		// Unicode: full, locale-independent case mapping; code points.
		{name: "uppercase straße -> STRASSE", req: post("/uppercase", `{"s":"straße"}`), status: ok, body: upper("STRASSE")},
		{name: "uppercase ǆ -> Ǆ", req: post("/uppercase", `{"s":"ǆ"}`), status: ok, body: upper("Ǆ")},
		{name: "uppercase ﬁ ligature -> FI", req: post("/uppercase", `{"s":"ﬁ"}`), status: ok, body: upper("FI")},
		{name: "uppercase i is not Turkish", req: post("/uppercase", `{"s":"istanbul"}`), status: ok, body: upper("ISTANBUL")},
		{name: "uppercase mixed text", req: post("/uppercase", `{"s":"Hello, Wörld! ñ 123"}`), status: ok, body: upper("HELLO, WÖRLD! Ñ 123")},
		{name: "uppercase escaped \\u00df -> SS", req: post("/uppercase", `{"s":"\u00df"}`), status: ok, body: upper("SS")},
		{name: "uppercase emoji unchanged", req: post("/uppercase", `{"s":"a😀b"}`), status: ok, body: upper("A😀B")},
		{name: "count emoji counts 1", req: post("/count", `{"s":"😀"}`), status: ok, body: count(1)},
		{name: "count escaped surrogate pair counts 1", req: post("/count", `{"s":"\ud83d\ude00"}`), status: ok, body: count(1)},
		{name: "count straße -> 6", req: post("/count", `{"s":"straße"}`), status: ok, body: count(6)},
		{name: "count combining accent -> 2", req: post("/count", `{"s":"e\u0301"}`), status: ok, body: count(2)},
		{name: "count ZWJ family -> 5", req: post("/count", `{"s":"👨‍👩‍👧"}`), status: ok, body: count(5)},
		{name: "count 1000 emoji -> 1000", req: post("/count", `{"s":"`+strings.Repeat("😀", 1000)+`"}`), status: ok, body: count(1000)},
		{name: "count body of exactly 1 MiB -> 200", req: post("/count", exactly1MiB), status: ok, body: count(1<<20 - 8)},
		{name: "count escaped backslash then u0000 is text -> 6", req: post("/count", `{"s":"\\u0000"}`), status: ok, body: count(6)},
		// Accepted variations.
		{name: "unknown field ignored -> 200", req: post("/uppercase", `{"x":1,"s":"a","y":{"z":[null]}}`), status: ok, body: upper("A")},
		{name: "whitespace around JSON -> 200", req: post("/uppercase", " \n\t{ \"s\" : \"a\" } \n"), status: ok, body: upper("A")},
		{name: "Content-Type text/plain -> 200", req: request{method: "POST", path: "/uppercase", body: []byte(`{"s":"a"}`), header: [][2]string{{"Content-Type", "text/plain"}}}, status: ok, body: upper("A")},
		{name: "no Content-Type -> 200", req: request{method: "POST", path: "/count", body: []byte(`{"s":"ab"}`), noCT: true}, status: ok, body: count(2)},
		{name: "chunked body -> 200", req: request{method: "POST", path: "/count", body: []byte(`{"s":"abc"}`), chunked: true}, status: ok, body: count(3)},
		{name: "duplicate key -> last wins or 400", req: post("/uppercase", `{"s":"first","s":"last"}`), status: []int{200, 400}, body: upper("LAST")},
		{name: "duplicate key, the last one a number -> 400", req: post("/count", `{"s":"ok","s":1}`), status: bad},
		{name: "duplicate key, the last one empty -> 400", req: post("/uppercase", `{"s":"ok","s":""}`), status: bad},
		// Unpinned by the contract: any non-5xx, but a 200 must be sane.
		{name: "lone surrogate escape -> 200 or 400", req: post("/count", `{"s":"\ud800"}`), status: []int{200, 400}, body: count(1)},
		{name: "invalid UTF-8 bytes -> 200 or 400", req: post("/uppercase", "{\"s\":\"a\xff\xfeb\"}"), status: []int{200, 400}},
		{name: "deep nesting in an unknown field -> 200 or 400", req: post("/uppercase", deepField), status: []int{200, 400}, body: upper("A")},
		// s missing, of the wrong type, empty, holding U+0000.
		{name: "s missing -> 400", req: post("/uppercase", `{}`), status: bad},
		{name: "s misspelled -> 400", req: post("/count", `{"S":"a"}`), status: bad},
		{name: "s null -> 400", req: post("/uppercase", `{"s":null}`), status: bad},
		{name: "s number -> 400", req: post("/uppercase", `{"s":1}`), status: bad},
		{name: "s beyond 2^63 -> 400", req: post("/count", `{"s":92233720368547758070}`), status: bad},
		{name: "s float -> 400", req: post("/count", `{"s":1.5}`), status: bad},
		{name: "s true -> 400", req: post("/uppercase", `{"s":true}`), status: bad},
		{name: "s array -> 400", req: post("/uppercase", `{"s":["a"]}`), status: bad},
		{name: "s object -> 400", req: post("/count", `{"s":{"s":"a"}}`), status: bad},
		{name: "s empty -> 400 (uppercase)", req: post("/uppercase", `{"s":""}`), status: bad},
		{name: "s empty -> 400 (count)", req: post("/count", `{"s":""}`), status: bad},
		{name: "s is U+0000 -> 400", req: post("/uppercase", `{"s":"\u0000"}`), status: bad},
		{name: "s holds U+0000 -> 400", req: post("/count", `{"s":"a\u0000b"}`), status: bad},
		// Not a JSON object, malformed, empty or truncated.
		{name: "body array -> 400", req: post("/uppercase", `["s","a"]`), status: bad},
		{name: "body null -> 400", req: post("/uppercase", `null`), status: bad},
		{name: "body string -> 400", req: post("/count", `"s"`), status: bad},
		{name: "body number -> 400", req: post("/count", `1`), status: bad},
		{name: "empty body -> 400", req: post("/uppercase", ``), status: bad},
		{name: "no body -> 400", req: request{method: "POST", path: "/count"}, status: bad},
		{name: "lone brace -> 400", req: post("/uppercase", `{`), status: bad},
		{name: "truncated JSON -> 400", req: post("/uppercase", `{"s":"hel`), status: bad},
		{name: "single quotes -> 400", req: post("/count", `{'s':'a'}`), status: bad},
		{name: "trailing comma -> 400", req: post("/count", `{"s":"a",}`), status: bad},
		{name: "trailing garbage -> 400", req: post("/uppercase", `{"s":"a"} x`), status: bad},
		{name: "two JSON objects -> 400", req: post("/uppercase", `{"s":"a"}{"s":"b"}`), status: bad},
		{name: "not JSON at all -> 400", req: post("/uppercase", `s=hello`), status: bad},
		{name: "100000 nested arrays -> 400", req: post("/count", deep), status: bad},
		{name: "body longer than Content-Length -> 400", req: request{raw: "POST /uppercase HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{\"s\":\"hello\"}"}, status: bad},
		{name: "body shorter than Content-Length -> no 5xx", protocol: true, req: request{raw: "POST /uppercase HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"s\":\"hel", half: true}},
		// Size.
		{name: "body of 1 MiB + 1 byte -> 413", req: post("/count", exactly1MiB[:6]+"b"+exactly1MiB[6:]), status: []int{413}},
		{name: "2 MiB body -> 413", req: post("/uppercase", big), status: []int{413}},
		{name: "2 MiB chunked body -> 413", req: request{method: "POST", path: "/count", body: []byte(big), chunked: true}, status: []int{413}},
		// Routing.
		{name: "GET /uppercase -> 405", req: get("/uppercase"), status: []int{405}, allow: "POST"},
		{name: "PUT /count -> 405", req: request{method: "PUT", path: "/count", body: []byte(`{"s":"a"}`)}, status: []int{405}, allow: "POST"},
		{name: "POST /uppercase/ -> 404", req: post("/uppercase/", `{"s":"a"}`), status: []int{404}},
		{name: "POST /UPPERCASE -> 404", req: post("/UPPERCASE", `{"s":"a"}`), status: []int{404}},
		{name: "POST /count/../uppercase -> 404", req: post("/count/../uppercase", `{"s":"a"}`), status: []int{404}},
	}
}

// healthyAfter checks that, after a hostile table, /health is still 200
// and a normal request of the workload still works.
func healthyAfter(w string, normal func() (request, error)) check {
	return check{workload: w, name: w + "/still healthy after hostile inputs", run: func(ctx context.Context, s *session) error {
		h := s.do(ctx, get("/health"))
		if err := (row{status: []int{200}}).expect(h); err != nil {
			return fmt.Errorf("GET /health: %v", err)
		}
		r, err := normal()
		if err != nil {
			return skipError(err.Error())
		}
		resp := s.do(ctx, r)
		if err := (row{status: []int{200, 201}}).expect(resp); err != nil {
			return fmt.Errorf("%s %s: %v", r.method, r.path, err)
		}
		return nil
	}}
}
