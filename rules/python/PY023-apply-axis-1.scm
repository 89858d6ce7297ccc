; id: PY023
; title: pandas .apply(..., axis=1): a Python call per row
; level: 6
; severity: medium
; status: requires_profiling
; rationale: apply with axis=1 calls the function once per row with a Series built for it: a hidden Python loop, typically 100x slower than column operations.
; fix: rewrite the function with column operations (df['a'] * df['b'], np.where, .str methods)
; quiet: apply() along axis 0, or with a vectorized function
; bad:
;| def margin(df):
;|     return df.apply(lambda r: r["price"] - r["cost"], axis=1)
; good:
;| def margin(df):
;|     return df["price"] - df["cost"]
((call function: (attribute attribute: (identifier) @m) arguments: (argument_list (keyword_argument name: (identifier) @k value: (integer) @v))) @finding
 (#eq? @m "apply") (#eq? @k "axis") (#eq? @v "1"))
