// The change lane's watermark for one repository: the head it last read.
MATCH (r:Repository {name: $repo})
RETURN r.watermark_sha AS sha
LIMIT 1
