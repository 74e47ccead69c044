def @csv:
  if type == "array" then
    map(if type == "string" then "\"" + (split("\"") | join("\"\"")) + "\""
        elif . == null then ""
        elif type == "boolean" or type == "number" then tostring
        else error("\(type) (\(tojson)) is not valid in a csv row") end)
    | join(",")
  else error("\(type) (\(tojson)) cannot be csv-formatted, only an array can be") end;
def @tsv:
  if type == "array" then
    map(if type == "string" then
          split("\\") | join("\\\\") | split("\t") | join("\\t")
          | split("\n") | join("\\n") | split("\r") | join("\\r")
        elif . == null then ""
        elif type == "boolean" or type == "number" then tostring
        else error("\(type) (\(tojson)) is not valid in a tsv row") end)
    | join("\t")
  else error("\(type) (\(tojson)) cannot be tsv-formatted, only an array can be") end;
def join($x): reduce .[] as $i (null;
  (if . == null then "" else . + $x end) +
  ($i | if type == "boolean" or type == "number" then tojson elif . == null then "" else . end)
) // "";
def leaf_paths: paths(scalars);
def toarray: if type == "array" then . else [.] end;
def IN(s): any(s == .; .);
def IN(src; s): any(src == s; .);
def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row | idx_expr | tostring] |= $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def tostream: path(def r: (.[]? | r), .; r) as $p | getpath($p) | reduce path(.[]?) as $q ([$p, .]; [$p + $q]);
