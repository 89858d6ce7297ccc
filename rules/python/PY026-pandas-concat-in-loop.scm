; id: PY026
; title: DataFrame grown row by row in a loop (pd.concat / DataFrame.append)
; level: 2
; severity: medium
; status: statically_confirmed
; metric: complexity_exponent
; when: in-loop
; rationale: Each concat or append copies the whole frame: O(n^2) copying for n rows.
; fix: collect rows (dicts or frames) in a list and build the DataFrame once with pd.DataFrame(rows) or pd.concat(frames)
; quiet: pd.concat of a list built in the loop (the recommended pattern); names that do not read as DataFrames
; bad:
;| import pandas as pd
;| def build(records):
;|     df = pd.DataFrame()
;|     for r in records:
;|         df = df.append(r, ignore_index=True)
;|     return df
; good:
;| import pandas as pd
;| def build(records):
;|     return pd.DataFrame(list(records))
((assignment left: (identifier) @acc right: (call function: (attribute object: (identifier) @o attribute: (identifier) @m))) @finding
 (#eq? @acc @o) (#eq? @m "append") (#match? @acc "(^df|_df$|frame)"))
