// Package serial renders serial numbers (单号) from templates: static text
// mixed with @{…} expressions for dates, numbers from named sources,
// request parameters, check digits and random characters, in the manner
// of JD's serial-number platform.
//
//	@{date:yyyyMMdd}@{seq:order,width=5}                     2017030400001
//	@{param:area}-@{param:unit,width=4}-@{seq:jobs,width=5}  010-6541-00001
//	SN-@{seq:sn,width=6}-@{checksum:mod,of=seq}              SN-000123-2
//
// Parse compiles a template once; Template.Next renders one serial and
// Template.NextN several. A Template is safe for concurrent use. Parse
// accepts only a template that proves it never renders a serial twice
// (see Uniqueness); every error it returns is a *SyntaxError naming the
// 1-based byte column and wrapping idforge.ErrInvalidArgument.
//
// # Syntax
//
//	template = { text | expr } .            at most MaxTextLen bytes
//	text     = any UTF-8 but control characters; "@@" is "@", "@{" starts
//	           an expression, any other "@" is literal .
//	expr     = "@{" kind [ ":" value ] { "," option } "}" .
//	kind     = letter { letter | digit | "_" | "-" | "." } .
//	option   = name "=" value .
//	name     = letter { letter | digit | "_" } .
//	value    = { char | "'" { char | "''" } "'" } .   no "," or "}" outside
//	           quotes; blanks around kinds, names and values are ignored
//
// Every expression may take as=NAME, naming its part for references.
//
// # Kinds
//
//	date:LAYOUT[,tz=ZONE]
//	    the evaluation's time in a Java (SimpleDateFormat) layout: yyyy yy
//	    MM M dd d DDD D HH H hh h mm m ss s, S… for fractions; 'quoted'
//	    text is literal, other ASCII letters are refused. ZONE is an IANA
//	    name, UTC, Local or an offset; default Options.Location (UTC).
//	seq:NAME[,width=N[,pad=C]][,by=PARAM]
//	    a number from the Source that Options.Resolver returns for NAME at
//	    parse time: an idforge.Generator or an idforge.PeriodCounter.
//	    width=N pads on the left with C (default 0; no other digit) and
//	    never cuts: a wider number is not rendered. With by=PARAM the
//	    number comes from NAME-VALUE, VALUE being the request's PARAM: a
//	    member of a per-period counter (CounterSet), or a source the
//	    Resolver, then a Creator, creates on first use.
//	param:NAME[,width=N[,pad=C]|,max=N][,chars=SET][,in=A|B|…]
//	    the request parameter NAME, required and checked: characters of
//	    SET (default safe), exactly N long with width=N, at most N with
//	    width=N,pad=C (then padded) or with max=N (default 32), and one of
//	    the in= values.
//	checksum:ALGO[,of=PART]
//	    one check character over the digits of PART, or of all the text
//	    before it (of=all, the default). ALGO is mod (JD's n*9%31%10),
//	    luhn or iso7064 (MOD 11-2: 0-9 or X). A named part must render
//	    digits only.
//	random:N[,chars=SET]
//	    N characters chosen with crypto/rand (default digits); they make
//	    serials hard to guess, never unique.
//
// The sets are digits, alpha, upper, lower, alnum, upperalnum, loweralnum,
// hex, upperhex, crockford and safe (letters, digits, '-' and '_'). A part
// answers to its as= name, a seq part also to NAME, a param part to its
// parameter, and any part to its kind when it is the only one of that
// kind (of=seq). A Go program adds kinds with RegisterKind: a Kind
// compiles an Expr into a Part that knows its maximum length and renders
// itself from the Eval context.
//
// # Uniqueness
//
// The proof rests on a counter: a seq part, or a custom part that
// implements UniqueCounter. Static text, dates, parameters, checksums and
// random characters all repeat, so a template of those alone is refused.
// The counter must be readable out of every serial: the parts on one side
// of it have a fixed length, and it has a fixed length itself (width=) or
// is closed on the other side by fixed-length parts or by text it never
// renders ("-" after a number). @{param:shop}@{seq:order} is refused: shop
// A1 with 23 and shop A12 with 3 both render A123. Fixed-length parts are
// static text, seq and param with width=, checksums, random, and dates
// whose fields are all padded; custom parts count as varying.
//
// A per-period counter (an idforge.PeriodReporter) repeats every period,
// so a readable, fixed-length date must also show every field of its
// period in the counter's time zone, and it must be the template's only
// per-period counter. A seq part with by=PARAM needs @{param:PARAM} in the
// template, readable the same way and without pad=, so that a value names
// a valid key and the serial shows both the value and the number; a member
// whose name already names a source is refused (idforge.ErrUnsafeChange).
//
// Dates render the period a PeriodCounter counted in when it is later
// than the clock's (see Template.Next), so a date belongs to its number.
package serial
