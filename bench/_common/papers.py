"""Published values the reproduction scripts compare against, typed in once.

From Thaeter & Reischuk, "Scalable k-anonymous Microaggregation" (SECRYPT 2021): information
loss in % to 2 decimals and runtimes in whole seconds (Java on an Intel Core i7 6850K), columns
k = 2, 3, 4, 5, 7, 10. Method keys as the scripts use them.
"""

from __future__ import annotations

KS_2021 = [2, 3, 4, 5, 7, 10]

# Table 1 (MDAV, MDAV*, ONA best of 100 runs, ONA* run once) on the five small files. The text
# extraction drops the stars; the rows are MDAV, MDAV*, ONA, ONA* in that order.
TABLE1_2021 = {
    "census": {
        "mdav": [3.18, 5.69, 7.49, 9.09, 11.60, 14.16],
        "mdav-star": [3.17, 5.78, 7.44, 8.81, 11.37, 14.01],
        "ona": [3.44, 5.47, 6.92, 8.16, 10.08, 12.45],
        "ona-star": [3.06, 5.26, 6.81, 7.99, 10.07, 12.46],
    },
    "tarragona": {
        "mdav": [9.33, 16.93, 19.55, 22.46, 27.52, 33.19],
        "mdav-star": [9.44, 16.14, 19.19, 22.25, 28.40, 34.75],
        "ona": [9.19, 15.01, 17.66, 20.88, 26.50, 30.95],
        "ona-star": [9.06, 15.11, 17.79, 20.69, 26.34, 31.15],
    },
    "eia": {
        "mdav": [0.31, 0.48, 0.67, 1.67, 2.17, 3.84],
        "mdav-star": [0.22, 0.45, 0.62, 0.91, 2.03, 2.63],
        "ona": [0.21, 0.40, 0.59, 0.81, 1.60, 2.01],
        "ona-star": [0.20, 0.37, 0.52, 0.79, 1.63, 1.99],
    },
    "cloud1": {
        "mdav": [1.21, 2.22, 3.74, 4.31, 5.70, 7.05],
        "mdav-star": [1.16, 2.11, 3.65, 4.09, 5.54, 6.70],
        "ona": [1.21, 2.16, 3.18, 3.82, 4.97, 6.35],
        "ona-star": [1.15, 2.02, 3.25, 3.92, 5.07, 6.28],
    },
    "cloud2": {
        "mdav": [0.68, 1.21, 1.70, 2.03, 2.69, 3.40],
        "mdav-star": [0.64, 1.10, 1.52, 1.87, 2.51, 3.28],
        "ona": [0.67, 1.08, 1.46, 1.73, 2.28, 2.96],
        "ona-star": [0.60, 1.04, 1.40, 1.70, 2.22, 2.92],
    },
}

# Appendix Table 6 on Adult (48,842 x 3) and Credit Card (30,000 x 24).
TABLE6_2021 = {
    "adult": {
        "mdav*": [0.04, 0.09, 0.14, 0.18, 0.28, 0.42],
        "ona*": [0.04, 0.08, 0.12, 0.16, 0.24, 0.36],
        "mondrian": [0.25, 0.51, 0.51, 0.51, 0.92, 0.92],
        "mondrian-v": [0.21, 0.41, 0.41, 0.41, 0.76, 0.76],
        "mondrian-v2d": [0.19, 0.38, 0.38, 0.38, 0.71, 0.71],
        "mona": [0.05, 0.11, 0.16, 0.21, 0.32, 0.46],
        "mona2d": [0.05, 0.10, 0.16, 0.21, 0.30, 0.46],
    },
    "credit": {
        "mdav*": [3.65, 6.44, 8.48, 10.21, 12.36, 14.68],
        "ona*": [3.50, 5.86, 7.53, 8.64, 10.23, 12.24],
        "mondrian": [30.33, 30.33, 41.47, 41.47, 43.75, 50.71],
        "mondrian-v": [24.05, 24.05, 32.54, 32.54, 34.12, 39.27],
        "mondrian-v2d": [15.81, 15.81, 21.93, 21.93, 23.23, 27.34],
        "mona": [7.74, 12.56, 15.99, 18.53, 22.45, 26.59],
        "mona2d": [6.87, 10.96, 13.89, 16.16, 19.50, 22.95],
    },
}
# Table 6, "Runtime on Adult" / "Runtime on Credit Card": whole seconds as printed.
TABLE6_2021_SECONDS = {
    "adult": {
        "mdav*": [211, 141, 89, 77, 50, 40],
        "ona*": [538, 358, 267, 218, 163, 116],
        "mondrian": [0] * 6, "mondrian-v": [0] * 6, "mondrian-v2d": [0] * 6,
        "mona": [1, 0, 0, 0, 0, 0],
        "mona2d": [1, 0, 0, 0, 0, 0],
    },
    "credit": {
        "mdav*": [223, 158, 120, 95, 78, 61],
        "ona*": [292, 209, 174, 145, 123, 106],
        "mondrian": [0] * 6, "mondrian-v": [0] * 6, "mondrian-v2d": [1] * 6,
        "mona": [1, 0, 0, 0, 0, 0],
        "mona2d": [2, 2, 2, 1, 1, 2],
    },
}
# Table 5: runtimes (whole seconds) of MONA_rho and MONA 2D_rho on Credit Card, per rho; only
# rho = 0.3..1 are printed.
TABLE5_2021 = {
    "mona": {0.3: [0, 0, 0, 0, 0, 0], 0.4: [0, 0, 0, 0, 0, 0], 0.5: [1, 0, 0, 0, 0, 0],
             0.6: [4, 2, 2, 2, 1, 1], 0.7: [8, 5, 4, 4, 3, 3], 0.8: [33, 24, 19, 16, 13, 11],
             0.9: [67, 48, 39, 37, 30, 25], 1.0: [306, 226, 174, 146, 123, 101]},
    "mona2d": {0.3: [2, 1, 1, 1, 1, 1], 0.4: [2, 1, 1, 1, 1, 1], 0.5: [2, 2, 2, 1, 1, 2],
               0.6: [5, 3, 3, 2, 2, 2], 0.7: [8, 6, 5, 4, 4, 4], 0.8: [34, 24, 20, 18, 14, 12],
               0.9: [70, 49, 42, 37, 31, 25], 1.0: [309, 216, 176, 146, 124, 98]},
}
