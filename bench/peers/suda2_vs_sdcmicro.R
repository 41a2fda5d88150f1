# sdcMicro 5.8.0's suda2 scores (score and disScore, DisFraction 0.01, original_scores = TRUE;
# the cases named *_ihsn with original_scores = FALSE),
# written as CSV for bench/peers/suda2_vs_sdcmicro.py, which compares incrowd's suda2 against
# them and (with --fixtures) writes the committed test fixtures under tests/data/.
#
# Usage: Rscript bench/peers/suda2_vs_sdcmicro.R OUTDIR ADULT_CSV_GZ            (the fixtures)
#        Rscript bench/peers/suda2_vs_sdcmicro.R OUTDIR ADULT_CSV_GZ time M ROWS (one timing)
#        Rscript bench/peers/suda2_vs_sdcmicro.R OUTDIR ADULT_CSV_GZ million     (1,000,000 rows)
# Library folder: $INCROWD_RLIB (default /root/.local/share/incrowd-peers/Rlib).
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
adult_path <- args[2]
rlib <- Sys.getenv("INCROWD_RLIB", "/root/.local/share/incrowd-peers/Rlib")
.libPaths(c(rlib, .libPaths()))
suppressMessages(library(sdcMicro))
dir.create(out, showWarnings = FALSE, recursive = TRUE)

num <- function(x) ifelse(is.na(x), "NA", sprintf("%.17g", x))

# Adult with "?" as missing and each text column a factor whose levels are in byte order
# (method = "radix": the C locale), so its codes are the ones incrowd gives sorted text
adult_keys <- c("age", "workclass", "education", "marital-status", "occupation", "race", "sex",
                "native-country")
read_adult <- function(rows) {
  a <- read.csv(gzfile(adult_path), check.names = FALSE, stringsAsFactors = FALSE)
  if (rows > 0) a <- a[seq_len(rows), ]
  for (k in adult_keys) {
    x <- a[[k]]
    if (is.character(x)) {
      x[x == "?"] <- NA
      a[[k]] <- factor(x, levels = sort(unique(x[!is.na(x)]), method = "radix"))
    }
  }
  a
}

if (length(args) >= 3 && args[3] == "time") {
  m <- as.integer(args[4])
  a <- read_adult(as.integer(args[5]))
  t <- system.time(s <- suppressWarnings(suda2(a, variables = adult_keys[seq_len(m)])))[["elapsed"]]
  cat(sprintf("seconds %.6f records_with_msu %d\n", t, sum(s$score > 0)))
  quit(save = "no")
}

if (length(args) >= 3 && args[3] == "million") {
  # Adult's first six keys, 1,000,000 rows: resampled rows, and each key drawn on its own
  keys <- adult_keys[1:6]
  a <- read_adult(0)
  set.seed(0)
  b <- a[sample.int(nrow(a), 1e6, replace = TRUE), keys]
  t1 <- system.time(s1 <- suppressWarnings(suda2(b, variables = keys)))[["elapsed"]]
  ind <- data.frame(lapply(a[, keys], function(x) x[sample.int(length(x), 1e6, replace = TRUE)]), check.names = FALSE)
  t2 <- system.time(s2 <- suppressWarnings(suda2(ind, variables = keys)))[["elapsed"]]
  cat(sprintf("resampled %.6f %d independent %.6f %d\n", t1, sum(s1$score > 0), t2, sum(s2$score > 0)))
  quit(save = "no")
}

run <- function(name, df, keys, original_scores = TRUE) {
  s <- suppressWarnings(suda2(df, variables = keys, original_scores = original_scores))
  inp <- df[, keys, drop = FALSE]
  inp[] <- lapply(inp, function(x) ifelse(is.na(x), "", as.character(x)))
  write.csv(cbind(inp, score = num(s$score), dis_score = num(s$disScore)),
            file.path(out, paste0(name, ".csv")), row.names = FALSE, na = "")
}

data(testdata)
keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")

# 1. testdata with its usual seven keys
run("testdata", testdata, keys)

# 2. the same with missing key values in a fixed pattern (about 1 in 37 cells per key)
td <- testdata
for (j in seq_along(keys)) {
  hit <- ((seq_len(nrow(td)) * 7 + j * 13) %% 37) == 0
  td[hit, keys[j]] <- NA
}
run("testdata_na", td, keys)

# 3. two keys: sdcMicro's wrapper adds a constant column (the weights and Q then use three)
run("testdata_two_keys", testdata, c("water", "relat"))

# 4. the first 4,000 rows of Adult, eight keys, "?" missing
run("adult", read_adult(4000), adult_keys)

# 5. original_scores = FALSE (the IHSN implementation's MSU weights): testdata as in 1 and 2
run("testdata_ihsn", testdata, keys, FALSE)
run("testdata_na_ihsn", td, keys, FALSE)
