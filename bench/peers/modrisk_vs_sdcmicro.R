# sdcMicro 5.8.0's modRisk (log-linear model risk, gr1 and gr2) on the cases of
# bench/peers/modrisk_vs_sdcmicro.py, which compares incrowd.risk's model_risk against them.
#
# Usage: Rscript bench/peers/modrisk_vs_sdcmicro.R OUT_CSV TESTDATA_CSV ADULT_CSV_GZ
# Library folder: $INCROWD_RLIB (default /root/.local/share/incrowd-peers/Rlib).
args <- commandArgs(trailingOnly = TRUE)
rlib <- Sys.getenv("INCROWD_RLIB", "/root/.local/share/incrowd-peers/Rlib")
.libPaths(c(rlib, .libPaths()))
suppressMessages(library(sdcMicro))

testdata <- read.csv(args[2])
adult <- read.csv(args[3], check.names = FALSE, na.strings = "?")
colnames(adult) <- gsub("-", "_", colnames(adult))
cases <- list(
  list(name = "testdata_curator", df = testdata, w = "sampling_weight",
       keys = c("urbrur", "water", "sex", "age", "relat", "hhcivil")),
  list(name = "testdata_houses", df = testdata, w = "sampling_weight",
       keys = c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")),
  list(name = "testdata_example", df = testdata, w = "sampling_weight", keys = c("sex", "water", "roof")),
  list(name = "adult", df = adult, w = "fnlwgt", keys = c("sex", "race", "marital_status", "education"))
)
rows <- list()
for (case in cases) {
  x <- case$df[, c(case$keys, case$w)]
  # the keys are categories, as an sdcMicro object holds them (factors)
  for (v in case$keys) x[[v]] <- as.factor(x[[v]])
  f <- as.formula(paste("~", paste(case$keys, collapse = " + ")))
  for (m in c("default", "CE")) {
    t <- system.time(r <- modRisk(x, method = m, formulaM = f, weights = case$w))[["elapsed"]]
    rows[[length(rows) + 1]] <- data.frame(case = case$name, method = m, gr1 = sprintf("%.17g", r$gr1),
                                           gr2 = sprintf("%.17g", r$gr2), seconds = t)
  }
}
write.csv(do.call(rbind, rows), args[1], row.names = FALSE, quote = FALSE)
