package verify

import (
	"context"
	"fmt"
	"strconv"
)

// skuShape is the body of a found sku, whatever its values.
var skuShape = map[string]any{
	"id": anyInt, "mem_id": anyInt, "mem_code": anyString, "sku_id": anyInt,
	"sku_code": anyString, "item": anyString, "sku_name": anyString, "sku_abbr": anyString,
}

func skuStages(t Target) []stage {
	known := t.KnownSKUs
	needKnown := func() error {
		if len(known) == 0 {
			return skipError("no known sku_id: Target.KnownSKUs is empty")
		}
		return nil
	}
	first := int64(0)
	if len(known) > 0 {
		first = known[0]
	}
	found := func(id int64) func(*response) error {
		return func(resp *response) error {
			want := map[string]any{}
			for k, v := range skuShape {
				want[k] = v
			}
			want["sku_id"] = id
			return fields(want)(resp)
		}
	}
	var cs []check
	// Up to three known ids, each read as itself.
	for i, id := range known[:min(3, len(known))] {
		cs = append(cs, checkOf("sku", row{name: fmt.Sprintf("GET known sku #%d -> 200 with every field", i+1),
			req: get("/sku/" + strconv.FormatInt(id, 10)), status: []int{200}, body: found(id)}))
	}
	if len(known) == 0 {
		cs = append(cs, checkOf("sku", row{name: "GET known sku #1 -> 200 with every field", needs: needKnown}))
	}
	var snapshot []byte
	rs := skuRows(first, found(first), needKnown)
	cs = append(cs, checkOf("sku", row{name: "GET known sku, remembered for later", needs: needKnown,
		req: get("/sku/" + strconv.FormatInt(first, 10)), status: []int{200}, body: found(first),
		after: func(r *response) { snapshot = r.body }}))
	cs = append(cs, rows("sku", rs)...)
	cs = append(cs,
		check{workload: "sku", name: "sku/table unchanged after SQL injection", run: func(ctx context.Context, s *session) error {
			if err := needKnown(); err != nil {
				return err
			}
			resp := s.do(ctx, get("/sku/"+strconv.FormatInt(first, 10)))
			if err := (row{status: []int{200}, body: found(first)}).expect(resp); err != nil {
				return err
			}
			a, err1 := (&response{body: snapshot}).object()
			b, err2 := resp.object()
			if err1 != nil || err2 != nil || fmt.Sprint(a) != fmt.Sprint(b) {
				return fmt.Errorf("sku %d reads differently than before the hostile inputs:\nbefore %s\nafter  %s", first, trunc(string(snapshot), 500), trunc(string(resp.body), 500))
			}
			return nil
		}},
		healthyAfter("sku", func() (request, error) {
			if err := needKnown(); err != nil {
				return request{}, err
			}
			return get("/sku/" + strconv.FormatInt(first, 10)), nil
		}),
		routeLabelCheck("sku", "/sku/{sku_id}", func() (request, error) { return get(fmt.Sprintf("/sku/%d", maxID)), nil }),
		queriedCheck(t, "sku", "SKU lookups", func() (request, error) {
			if err := needKnown(); err != nil {
				return request{}, err
			}
			return get("/sku/" + strconv.FormatInt(first, 10)), nil
		}, found(first)),
	)
	return []stage{fixed(cs...)}
}

// skuRows is the sku table; rows reading the known sku need needKnown.
func skuRows(known int64, found func(*response) error, needKnown func() error) []row {
	bad := []int{400}
	sku := func(p string) request { return get("/sku/" + p) }
	return []row{
		{name: "GET known sku zero-padded to 16 digits -> 200", req: sku(fmt.Sprintf("%016d", known)), status: []int{200}, body: found, needs: needKnown},
		// The query string is not part of the route: ignored (200) or refused (400).
		{name: "GET known sku with an injected query string -> 200 or 400", req: sku(fmt.Sprintf("%d?sku_id=1%%20OR%%201=1", known)), status: []int{200, 400}, body: found, needs: needKnown},
		{name: "GET unknown sku 2^53-1 -> 404", req: sku(strconv.FormatInt(maxID, 10)), status: []int{404}},
		{name: "GET sku of 17 digits -> 400", req: sku("00000000000000001"), status: bad},
		{name: "GET sku 2^53 -> 400", req: sku("9007199254740992"), status: bad},
		{name: "GET sku 2^63 -> 400", req: sku("9223372036854775808"), status: bad},
		{name: "GET sku 2^64 -> 400", req: sku("18446744073709551616"), status: bad},
		{name: "GET sku 0 -> 400", req: sku("0"), status: bad},
		{name: "GET sku -1 -> 400", req: sku("-1"), status: bad},
		{name: "GET sku +1 -> 400", req: sku("%2B1"), status: bad},
		{name: "GET sku abc -> 400", req: sku("abc"), status: bad},
		{name: "GET sku 1.5 -> 400", req: sku("1.5"), status: bad},
		{name: "GET sku 1e3 -> 400", req: sku("1e3"), status: bad},
		{name: "GET sku 0x1F -> 400", req: sku("0x1F"), status: bad},
		{name: "GET sku 0b1 -> 400", req: sku("0b1"), status: bad},
		{name: "GET sku 1_000 -> 400", req: sku("1_000"), status: bad},
		{name: "GET sku 1.0 -> 400", req: sku("1.0"), status: bad},
		{name: "GET sku 00 -> 400", req: sku("00"), status: bad},
		{name: "GET sku 16 nines (over 2^53-1) -> 400", req: sku("9999999999999999"), status: bad},
		{name: "GET sku Infinity -> 400", req: sku("Infinity"), status: bad},
		{name: "GET sku NaN -> 400", req: sku("NaN"), status: bad},
		{name: "GET sku null -> 400", req: sku("null"), status: bad},
		{name: "GET sku 1,2 -> 400", req: sku("1,2"), status: bad},
		{name: "GET sku with a newline -> 400", req: sku("1%0A"), status: bad},
		{name: "GET sku with a space -> 400", req: sku("%201"), status: bad},
		{name: "GET sku with U+0000 -> 400", req: sku("1%00"), status: bad},
		{name: "GET sku in Arabic-Indic digits -> 400", req: sku("%D9%A1"), status: bad},
		{name: "GET sku in fullwidth digits -> 400", req: sku("%EF%BC%91%EF%BC%92"), status: bad},
		{name: "GET sku 1;DROP TABLE -> 400", req: sku("1;DROP%20TABLE%20purch_sku_master"), status: bad},
		{name: "GET sku 1 OR 1=1 -> 400", req: sku("1%20OR%201=1"), status: bad},
		{name: "GET sku with a quote -> 400", req: sku("1%27"), status: bad},
		{name: "GET sku UNION SELECT -> 400", req: sku("1%20UNION%20SELECT%20*%20FROM%20mysql.user"), status: bad},
		{name: "GET sku 1;SLEEP(5) -> 400", req: sku("1;SELECT%20SLEEP(5)"), status: bad},
		{name: "GET sku %2e%2e -> 400", req: sku("%2e%2e"), status: bad},
		{name: "GET sku ..%2f..%2fetc%2fpasswd -> 400 or 404", req: sku("..%2f..%2fetc%2fpasswd"), status: []int{400, 404}},
		{name: "GET /sku/../health -> 404", req: get("/sku/../health"), status: []int{404}},
		{name: "GET /sku/ -> 400 or 404", req: sku(""), status: []int{400, 404}},
		{name: "GET /sku -> 404", req: get("/sku"), status: []int{404}},
		{name: "GET /sku/1/ -> 404", req: sku("1/"), status: []int{404}},
		{name: "GET /sku/1/2 -> 404", req: sku("1/2"), status: []int{404}},
		{name: "POST /sku/1 -> 405", req: post("/sku/1", `{}`), status: []int{405}, allow: "GET"},
		{name: "DELETE /sku/1 -> 405", req: request{method: "DELETE", path: "/sku/1"}, status: []int{405}, allow: "GET"},
	}
}
