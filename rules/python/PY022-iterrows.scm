; id: PY022
; title: pandas .iterrows() / .itertuples() loop
; level: 6
; severity: medium
; status: requires_profiling
; rationale: iterrows builds a Series per row (and loses dtypes): hundreds of times slower than a column operation.
; fix: use vectorized column arithmetic, np.where, .map on a column, or groupby; itertuples only when a loop is unavoidable
; quiet: vectorized pandas operations; itertuples() (fast enough for most uses)
; bad:
;| def totals(df):
;|     out = []
;|     for _, row in df.iterrows():
;|         t = row["price"] * row["qty"]
;|         out.append(t)
;|     return out
; good:
;| def totals(df):
;|     return (df["price"] * df["qty"]).tolist()
((call function: (attribute attribute: (identifier) @m) arguments: (argument_list)) @finding (#eq? @m "iterrows"))
