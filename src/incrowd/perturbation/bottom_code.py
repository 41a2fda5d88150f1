"""Bottom coding: values below a limit replaced (sdcMicro's ``topBotCoding``, kind "bottom")."""

from __future__ import annotations

from .top_code import TopCode


class BottomCode(TopCode):
    key = "bottom_code"
    sdcmicro = 'topBotCoding(kind = "bottom")'
    summary = "replaces the values below a limit"
    side = -1
    coded = "bottom_coded"
