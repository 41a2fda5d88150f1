# sdcMicro 5.8.0's per-record risk figures (freqCalc, indivRisk, measure_risk with w and hid),
# written as CSV for bench/peers/risk_vs_sdcmicro.py, which compares incrowd.risk against them
# and (with --fixtures) writes the committed test fixtures under tests/data/.
#
# Usage: Rscript bench/peers/risk_vs_sdcmicro.R OUTDIR ADULT_CSV_GZ
# Library folder: $INCROWD_RLIB (default /root/.local/share/incrowd-peers/Rlib).
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
adult_path <- args[2]
rlib <- Sys.getenv("INCROWD_RLIB", "/root/.local/share/incrowd-peers/Rlib")
.libPaths(c(rlib, .libPaths()))
suppressMessages(library(sdcMicro))
dir.create(out, showWarnings = FALSE, recursive = TRUE)

num <- function(x) ifelse(is.na(x), "", sprintf("%.17g", x))
globals <- list()

run <- function(name, df, keys, w = NULL, hid = NULL) {
  t <- system.time(r <- measure_risk(df, keyVars = keys, w = w, hid = hid))[["elapsed"]]
  res <- data.frame(fk = num(r$Res[, "fk"]), Fk = num(r$Res[, "Fk"]), risk = num(r$Res[, "risk"]))
  g <- c(global_risk = r$global_risk, global_risk_ER = r$global_risk_ER,
         global_risk_pct = r$global_risk_pct, seconds = t)
  if (!is.null(hid)) {
    res$hier_risk <- num(r$Res[, "hier_risk"])
    g <- c(g, hier_risk = r$hier_risk, hier_risk_ER = r$hier_risk_ER)
  }
  globals[[name]] <<- g
  res
}

write_out <- function(name, inputs, res) {
  inputs[] <- lapply(inputs, function(x) if (is.numeric(x)) num(x) else ifelse(is.na(x), "", as.character(x)))
  write.csv(cbind(inputs, res), file.path(out, paste0(name, ".csv")), row.names = FALSE, na = "")
}

data(testdata)
keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
inp <- testdata[, c(keys, "sampling_weight", "ori_hid")]

# 1. testdata as it is: weights and households
r <- run("testdata", testdata, keys, w = "sampling_weight", hid = "ori_hid")
r0 <- run("testdata_unweighted", testdata, keys)
r$risk_unweighted <- r0$risk
write_out("testdata_risk", inp, r)

# 2. testdata with missing key values in a fixed pattern (about 1 in 37 cells per key), and
#    three rows whose keys are all missing: sdcMicro's freqCalc lets a missing value match any
td <- testdata
for (j in seq_along(keys)) {
  hit <- ((seq_len(nrow(td)) * 7 + j * 13) %% 37) == 0
  td[hit, keys[j]] <- NA
}
td[c(5, 1000, 4000), keys] <- NA
rn <- run("testdata_na", td, keys, w = "sampling_weight", hid = "ori_hid")
# one key with missing values takes another branch of freqCalc
f1 <- freqCalc(td, keyVars = "walls", w = "sampling_weight")
rn$fk_walls <- num(f1$fk)
rn$Fk_walls <- num(f1$Fk)
write_out("testdata_na_risk", td[, c(keys, "sampling_weight", "ori_hid")], rn)

# 3. Adult with fnlwgt as the weight; '?' is missing (in native_country)
adult <- read.csv(gzfile(adult_path), na.strings = "?", check.names = FALSE, stringsAsFactors = FALSE)
# freqCalc builds R expressions from the column names: a '-' in a name breaks it
names(adult) <- gsub("-", "_", names(adult))
akeys <- c("age", "sex", "race", "marital_status", "education", "native_country")
ra <- run("adult", adult, akeys, w = "fnlwgt")
write_out("adult_risk", adult[, c(akeys, "fnlwgt")], ra)
sub <- adult[seq(1, nrow(adult), by = 25), ]
rs <- run("adult_subset", sub, akeys, w = "fnlwgt")
write_out("adult_subset_risk", sub[, c(akeys, "fnlwgt")], rs)

g <- do.call(rbind, lapply(names(globals), function(n) {
  v <- globals[[n]]
  data.frame(case = n, measure = names(v), value = num(unname(v)))
}))
write.csv(g, file.path(out, "globals.csv"), row.names = FALSE)
cat("sdcMicro", as.character(packageVersion("sdcMicro")), "written to", out, "\n")
