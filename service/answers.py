"""How a move's answer is kept for the replays of its ``Idempotency-Key``: compressed.

A replay must answer byte for byte what the move first answered, so the answer's bytes are
kept, compressed by zlib with a preset dictionary: a seat view and its events written as
the referee writes them, one per variant (the keys, the rules, the shape of seats and
melds). Over whole random games the answers average 1.5-4.3 KB by variant and are kept in
250-580 bytes (650-980 without a dictionary), at 20-40 us of CPU each.

The zlib header names the dictionary by its Adler-32 checksum, and a record may be read
for as long as idempotency keys are kept (``RUMMY_IDEMPOTENCY_TTL_SECONDS``), by the next
version of the service too: a dictionary is never changed (tests/store/test_idempotency.py pins
each checksum). To improve one, add it under a new name to :data:`DICTIONARIES` and keep the
old one in :data:`RETIRED` for at least a day. An answer of a variant without a dictionary
is compressed without one; a stored answer that is plain JSON (``{…``: what earlier
versions stored) is read as it is.
"""

from __future__ import annotations

import zlib

__all__ = ["DICTIONARIES", "RETIRED", "pack", "unpack"]

_WBITS = 12  # a 4 KB window: an answer and the end of its dictionary
_MEM_LEVEL = 5  # small state: each answer is compressed on its own
_LEVEL = 6

DICTIONARIES: dict[str, bytes] = {
    "basic": (
        b'{"game":{"game_id":"","variant":"basic","rules":{"ace":"low","melds_per_turn":"unlim'
        b'ited","lay_off_requires_own_meld":false,"must_discard_to_go_out":false,"scoring":"wi'
        b'nner_collects","going_rummy":"double","stock_exhausted":"shuffle","max_stock_rebuild'
        b's":3,"match_end":{"target":150}},"status":"playing","hand_number":1,"dealer":3,"turn'
        b'":{"seat":2,"phase":"draw"},"discard_only":false,"version":201,"stock_count":3,"disc'
        b'ard_top":"2C","discard_count":21,"seats":[{"seat":0,"name":"Ana","hand_count":1,"ope'
        b'ned":true,"total":0,"out_of_match":false},{"seat":1,"name":"Bo","hand_count":1,"open'
        b'ed":true,"total":0,"out_of_match":false},{"seat":2,"name":"Cy","hand_count":2,"opene'
        b'd":true,"total":0,"out_of_match":false},{"seat":3,"name":"Di","hand_count":3,"opened'
        b'":true,"total":0,"out_of_match":false}],"melds":[{"meld_id":"m1","owner":3,"kind":"r'
        b'un","cards":["JS","QS","KS"],"wilds":[]},{"meld_id":"m2","owner":2,"kind":"run","car'
        b'ds":["AS","2S","3S","4S","5S","6S","7S","8S","9S","TS"],"wilds":[]},{"meld_id":"m3",'
        b'"owner":0,"kind":"set","cards":["3H","3D","3C"],"wilds":[]},{"meld_id":"m4","owner":'
        b'1,"kind":"run","cards":["9D","TD","JD","QD","KD"],"wilds":[]}],"hands_played":[],"wi'
        b'nners":null,"arranged":false,"deal_commitment":"","seat":1,"hand":["JC"],"taken_disc'
        b'ard":null},"events":[{"type":"discard","seat":1,"card":"2C"}]}'
    ),
    "rummy51": (
        b'{"game":{"game_id":"","variant":"rummy51","rules":{"ace":"high_or_low","opening_poin'
        b'ts":51,"opening_requires_clean_run":true,"opening_counts_lay_offs":true,"max_wilds_p'
        b'er_meld":1,"joker_swap_from_set":"four_only","allow_take_from_meld":false,"last_card'
        b'_call":"required","must_discard_to_go_out":true,"joker_penalty":20,"stock_exhausted"'
        b':"shuffle","max_stock_rebuilds":3,"match_end":{"target":1000}},"status":"playing","h'
        b'and_number":1,"dealer":0,"turn":{"seat":0,"phase":"play"},"discard_only":false,"vers'
        b'ion":201,"stock_count":14,"discard_top":"2S","discard_count":39,"seats":[{"seat":0,"'
        b'name":"Ana","hand_count":3,"opened":true,"total":0,"out_of_match":false},{"seat":1,"'
        b'name":"Bo","hand_count":13,"opened":false,"total":0,"out_of_match":false},{"seat":2,'
        b'"name":"Cy","hand_count":13,"opened":false,"total":0,"out_of_match":false},{"seat":3'
        b',"name":"Di","hand_count":5,"opened":true,"total":0,"out_of_match":false}],"melds":['
        b'{"meld_id":"m1","owner":0,"kind":"run","cards":["9S","TS","JK","QS","KS","AS"],"wild'
        b's":[{"index":2,"card":"JK","as":"JS"}]},{"meld_id":"m2","owner":0,"kind":"run","card'
        b's":["7S","8S","JK","TS"],"wilds":[{"index":2,"card":"JK","as":"9S"}]},{"meld_id":"m3'
        b'","owner":0,"kind":"run","cards":["JH","QH","JK","AH"],"wilds":[{"index":2,"card":"J'
        b'K","as":"KH"}]},{"meld_id":"m4","owner":3,"kind":"set","cards":["JS","JC","JK"],"wil'
        b'ds":[{"index":2,"card":"JK","as":"J*"}]},{"meld_id":"m5","owner":3,"kind":"run","car'
        b'ds":["TH","JH","QH","KH"],"wilds":[]}],"hands_played":[],"winners":null,"arranged":f'
        b'alse,"deal_commitment":"","seat":0,"hand":["7S","6H","7D"],"taken_discard":null},"ev'
        b'ents":[{"type":"draw","seat":0,"source":"stock","card":"7D"}]}'
    ),
    "lebanese14": (
        b'{"game":{"game_id":"","variant":"lebanese14","rules":{"ace":"high_or_low","opening_p'
        b'oints":51,"opening_requires_clean_run":true,"opening_counts_lay_offs":true,"max_wild'
        b's_per_meld":1,"joker_swap_from_set":"four_only","allow_take_from_meld":false,"last_c'
        b'ard_call":"required","must_discard_to_go_out":true,"joker_penalty":20,"stock_exhaust'
        b'ed":"shuffle","max_stock_rebuilds":3,"match_end":{"target":1000}},"status":"playing"'
        b',"hand_number":1,"dealer":0,"turn":{"seat":0,"phase":"draw"},"discard_only":false,"v'
        b'ersion":201,"stock_count":6,"discard_top":"3H","discard_count":42,"seats":[{"seat":0'
        b',"name":"Ana","hand_count":14,"opened":false,"total":0,"out_of_match":false},{"seat"'
        b':1,"name":"Bo","hand_count":2,"opened":true,"total":0,"out_of_match":false},{"seat":'
        b'2,"name":"Cy","hand_count":4,"opened":true,"total":0,"out_of_match":false},{"seat":3'
        b',"name":"Di","hand_count":2,"opened":true,"total":0,"out_of_match":false}],"melds":['
        b'{"meld_id":"m1","owner":3,"kind":"set","cards":["KS","KD","KC","JK"],"wilds":[{"inde'
        b'x":3,"card":"JK","as":"KH"}]},{"meld_id":"m2","owner":3,"kind":"run","cards":["6C","'
        b'7C","8C","9C","TC"],"wilds":[]},{"meld_id":"m3","owner":3,"kind":"set","cards":["5S"'
        b',"5H","5D","5C"],"wilds":[]},{"meld_id":"m4","owner":1,"kind":"set","cards":["JS","J'
        b'H","JC","JK"],"wilds":[{"index":3,"card":"JK","as":"JD"}]},{"meld_id":"m5","owner":1'
        b',"kind":"run","cards":["5D","6D","7D","8D","9D","TD","JD","QD"],"wilds":[]},{"meld_i'
        b'd":"m6","owner":1,"kind":"set","cards":["5S","5H","5C","JK"],"wilds":[{"index":3,"ca'
        b'rd":"JK","as":"5D"}]},{"meld_id":"m7","owner":2,"kind":"set","cards":["QS","QH","QC"'
        b',"JK"],"wilds":[{"index":3,"card":"JK","as":"QD"}]},{"meld_id":"m8","owner":2,"kind"'
        b':"run","cards":["TH","JH","QH","KH","AH"],"wilds":[]}],"hands_played":[],"winners":n'
        b'ull,"arranged":false,"deal_commitment":"","seat":3,"hand":["KS","AC"],"taken_discard'
        b'":null},"events":[{"type":"discard","seat":3,"card":"3H"}]}'
    ),
    "dummy": (
        b'{"game":{"game_id":"","variant":"dummy","rules":{"run_same_suit":false,"playable_dis'
        b'card":"forbid","cut_ins":false,"stock_exhausted":"shuffle","max_stock_rebuilds":3,"m'
        b'atch_end":{"contracts":12}},"status":"playing","hand_number":3,"dealer":2,"turn":{"s'
        b'eat":2,"phase":"draw"},"discard_only":false,"version":201,"stock_count":36,"discard_'
        b'top":"5S","discard_count":20,"seats":[{"seat":0,"name":"Ana","hand_count":13,"opened'
        b'":false,"total":65,"out_of_match":false,"contract":{"number":3,"text":"two sets of 4'
        b'","melds":[{"kind":"set","min_size":4},{"kind":"set","min_size":4}],"down":false,"co'
        b'mpleted":2,"cut_ins":0}},{"seat":1,"name":"Bo","hand_count":3,"opened":true,"total":'
        b'110,"out_of_match":false,"contract":{"number":2,"text":"a set of 3 and a run of 4","'
        b'melds":[{"kind":"set","min_size":3},{"kind":"run","min_size":4}],"down":true,"comple'
        b'ted":1,"cut_ins":0}},{"seat":2,"name":"Cy","hand_count":1,"opened":true,"total":20,"'
        b'out_of_match":false,"contract":{"number":3,"text":"two sets of 4","melds":[{"kind":"'
        b'set","min_size":4},{"kind":"set","min_size":4}],"down":true,"completed":2,"cut_ins":'
        b'0}},{"seat":3,"name":"Di","hand_count":3,"opened":true,"total":20,"out_of_match":fal'
        b'se,"contract":{"number":3,"text":"two sets of 4","melds":[{"kind":"set","min_size":4'
        b'},{"kind":"set","min_size":4}],"down":true,"completed":2,"cut_ins":0}}],"melds":[{"m'
        b'eld_id":"m15","owner":1,"kind":"run","cards":["7D","8D","9D","TC","JS","QD","KC","2H'
        b'"],"wilds":[{"index":7,"card":"2H","as":"A*"}]},{"meld_id":"m16","owner":1,"kind":"s'
        b'et","cards":["6H","6D","2D","2C"],"wilds":[{"index":2,"card":"2D","as":"6*"},{"index'
        b'":3,"card":"2C","as":"6*"}]},{"meld_id":"m17","owner":3,"kind":"set","cards":["4S","'
        b'4D","4D","4C","4C","2C"],"wilds":[{"index":5,"card":"2C","as":"4*"}]},{"meld_id":"m1'
        b'8","owner":3,"kind":"set","cards":["3S","3S","3H","3D","3C","JK"],"wilds":[{"index":'
        b'5,"card":"JK","as":"3*"}]},{"meld_id":"m19","owner":2,"kind":"set","cards":["KS","KH'
        b'","KC","2S"],"wilds":[{"index":3,"card":"2S","as":"K*"}]},{"meld_id":"m20","owner":2'
        b',"kind":"set","cards":["6H","6D","6C","2H"],"wilds":[{"index":3,"card":"2H","as":"6*'
        b'"}]}],"hands_played":[{"hand_number":1,"went_out":3,"reason":"out","counts":[35,95,2'
        b'0,0],"scores":[35,95,20,0],"going_rummy":false,"contracts":[{"number":1,"made":true}'
        b',{"number":1,"made":false},{"number":1,"made":true},{"number":1,"made":true}]},{"han'
        b'd_number":2,"went_out":2,"reason":"out","counts":[30,15,0,20],"scores":[30,15,0,20],'
        b'"going_rummy":false,"contracts":[{"number":2,"made":true},{"number":1,"made":true},{'
        b'"number":2,"made":true},{"number":2,"made":true}]}],"winners":null,"arranged":false,'
        b'"deal_commitment":"","cut_in":{"open":false,"claims":[]},"seat":1,"hand":["TS","7D",'
        b'"7C"],"taken_discard":null},"events":[{"type":"discard","seat":1,"card":"5S"}]}'
    ),
    "wrotham": (
        b'{"game":{"game_id":"","variant":"wrotham","rules":{"ace":"low","melds_per_turn":"unl'
        b'imited","lay_off_requires_own_meld":false,"must_discard_to_go_out":false,"scoring":"'
        b'winner_collects","going_rummy":"double","stock_exhausted":"shuffle","max_stock_rebui'
        b'lds":3,"joker_penalty":15,"match_end":{"deals":6}},"status":"playing","hand_number":'
        b'3,"dealer":1,"turn":{"seat":3,"phase":"draw"},"discard_only":false,"version":201,"st'
        b'ock_count":15,"discard_top":"QC","discard_count":12,"seats":[{"seat":0,"name":"Ana",'
        b'"hand_count":3,"opened":true,"total":57,"out_of_match":false},{"seat":1,"name":"Bo",'
        b'"hand_count":3,"opened":true,"total":0,"out_of_match":false},{"seat":2,"name":"Cy","'
        b'hand_count":3,"opened":true,"total":53,"out_of_match":false},{"seat":3,"name":"Di","'
        b'hand_count":3,"opened":false,"total":0,"out_of_match":false}],"melds":[{"meld_id":"m'
        b'12","owner":1,"kind":"run","cards":["5S","6S","7S","8S","9S","TS","JS","QS"],"wilds"'
        b':[]},{"meld_id":"m13","owner":0,"kind":"set","cards":["4S","4D","4C","JK"],"wilds":['
        b'{"index":3,"card":"JK","as":"4H"}]},{"meld_id":"m14","owner":2,"kind":"set","cards":'
        b'["9H","9D","9C","JK"],"wilds":[{"index":3,"card":"JK","as":"9S"}]}],"hands_played":['
        b'{"hand_number":1,"went_out":2,"reason":"out","counts":[10,20,0,23],"scores":[0,0,53,'
        b'0],"going_rummy":false},{"hand_number":2,"went_out":0,"reason":"out","counts":[0,30,'
        b'4,23],"scores":[57,0,0,0],"going_rummy":false}],"winners":null,"arranged":false,"dea'
        b'l_commitment":"","seat":2,"hand":["3S","JH","TC"],"taken_discard":null},"events":[{"'
        b'type":"discard","seat":2,"card":"QC"}]}'
    ),
}
"""The dictionary of each variant's answers (a mid-game answer of a random game)."""

RETIRED: tuple[bytes, ...] = ()
"""Dictionaries no longer used to compress, still known to decompress."""

_BY_CHECKSUM = {zlib.adler32(d): d for d in (*DICTIONARIES.values(), *RETIRED)}
_FDICT = 0x20  # the zlib header's flag: a dictionary checksum follows


def pack(answer: bytes, variant: str) -> bytes:
    """``answer`` compressed with the dictionary of ``variant`` (none if it has none)."""
    zdict = DICTIONARIES.get(variant)
    compressor = (zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL, zdict=zdict)
                  if zdict is not None else
                  zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL))
    return compressor.compress(answer) + compressor.flush()


def unpack(stored: bytes) -> bytes:
    """The answer ``pack`` was given (or ``stored`` itself when it is plain JSON); ValueError
    if it is neither."""
    if stored[:1] == b"{":
        return stored
    if len(stored) < 2:
        raise ValueError("not a kept answer")
    zdict = None
    if stored[1] & _FDICT:
        zdict = _BY_CHECKSUM.get(int.from_bytes(stored[2:6], "big"))
        if zdict is None:
            raise ValueError("a kept answer compressed with an unknown dictionary")
    try:
        decompressor = (zlib.decompressobj(zlib.MAX_WBITS, zdict=zdict) if zdict is not None
                        else zlib.decompressobj(zlib.MAX_WBITS))
        answer = decompressor.decompress(stored) + decompressor.flush()
    except zlib.error as exc:
        raise ValueError(f"not a kept answer: {exc}") from None
    if not decompressor.eof:
        raise ValueError("a kept answer cut short")
    return answer
