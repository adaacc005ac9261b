#!/usr/bin/env python3
"""Write the inputs of the Linux workload set, testbenches/linux/data/ (gitignored).

    scripts/linux-inputs.py            # (re)write data/, then check it against programs.json
    scripts/linux-inputs.py --if-missing   # only when a file is missing or differs
    scripts/linux-inputs.py --print    # print the sha256 of every input (for the manifest)

Everything is a function of this script alone: its own 64-bit xorshift generator (not
Python's `random`, whose derived functions are not promised stable across versions), fixed
seeds, fixed sizes. The two compressed inputs (`text.txt.gz`, `text.txt.bz2`) are made by
the pinned busybox itself under `qemu-arm`, so `bin/busybox` must be fetched first
(scripts/fetch-linux-workloads.sh). Every file gets the same fixed mtime, so no host
metadata can leak into an output. Python 3.11 standard library only.
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINUX = os.path.join(ROOT, "testbenches", "linux")
DATA = os.path.join(LINUX, "data")
MANIFEST = os.path.join(LINUX, "programs.json")
MTIME = 946684800  # 2000-01-01T00:00:00Z, for every input and every tar member

# Sizes: chosen so that every workload of programs.json runs 10 M to 500 M instructions.
TEXT_BYTES = 1 << 20  # data/text.txt: the large corpus (gunzip, md5sum)
SMALL_BYTES = 128 << 10  # data/small.txt: the corpus of the compressors, grep, tr, wc
SHORT_BYTES = 24 << 10  # data/short.txt: the corpus of the slowest applets (awk, sed)
WORDS_LINES = 20000  # data/words.txt: one word per line, unsorted
NUMBERS_LINES = 5000  # data/numbers.txt: one integer per line
RECORDS_LINES = 4000  # data/records.csv
BLOB_BYTES = 256 << 10  # data/blob.bin and data/blob2.bin (differ in a few hundred bytes)
TREE_FILES = 2400  # file members of data/tree.tar (tar spends its time per member)

WORDS = """
the of and to a in is it you that he was for on are with as his they be at one have this
from or had by word but what some we can out other were all there when up use your how
said an each she which do their time if will way about many then them write would like so
these her long make thing see him two has look more day could go come did number sound no
most people my over know water than call first who may down side been now find any new
work part take get place made live where after back little only round man year came show
every good me give our under name very through just form sentence great think say help low
line differ turn cause much mean before move right boy old too same tell does set three
want air well also play small end put home read hand port large spell add even land here
must big high such follow act why ask men change went light kind off need house picture
try us again animal point mother world near build self earth father head stand own page
should country found answer school grow study still learn plant cover food sun four
between state keep eye never last let thought city tree cross farm hard start might story
saw far sea draw left late run while press close night real life few north open seem
together next white children begin got walk example ease paper group always music those
both mark often letter until mile river car feet care second book carry took science eat
room friend began idea fish mountain stop once base hear horse cut sure watch color face
wood main enough plain girl usual young ready above ever red list though feel talk bird
soon body dog family direct pose leave song measure door product black short numeral
class wind question happen complete ship area half rock order fire south problem piece
told knew pass since top whole king space heard best hour better true during hundred five
remember step early hold west ground interest reach fast verb sing listen six table
travel less morning ten simple several vowel toward war lay against pattern slow center
love person money serve appear road map rain rule govern pull cold notice voice unit power
town fine certain fly fall lead cry dark machine note wait plan figure star box noun field
rest correct able pound done beauty drive stood contain front teach week final gave green
quick develop ocean warm free minute strong special mind behind clear tail produce fact
street inch multiply nothing course stay wheel full force blue object decide surface deep
moon island foot system busy test record boat common gold possible plane instead dry
wonder laugh thousand ago ran check game shape equate miss brought heat snow tire bring
yes distant fill east paint language among grand ball yet wave drop heart present heavy
dance engine position arm wide sail material size vary settle speak weight general ice
matter circle pair include divide syllable felt perhaps pick sudden count square reason
length represent art subject region energy hunt probable bed brother egg ride cell believe
fraction forest sit race window store summer train sleep prove lone leg exercise wall
catch mount wish sky board joy winter sat written wild instrument kept glass grass cow job
edge sign visit past soft fun bright gas weather month million bear finish happy hope
flower clothe strange gone jump baby eight village meet root buy raise solve metal whether
push seven paragraph third shall held hair describe cook floor either result burn hill
safe cat century consider type law bit coast copy phrase silent tall sand soil roll
temperature finger industry value fight lie beat excite natural view sense ear else quite
broke case middle kill son lake moment scale loud spring observe child straight consonant
nation dictionary milk speed method organ pay age section dress cloud surprise quiet stone
tiny climb cool design poor lot experiment bottom key iron single stick flat twenty skin
smile crease hole trade melody trip office receive row mouth exact symbol die least trouble
shout except wrote seed tone join suggest clean break lady yard rise bad blow oil blood
touch grew cent mix team wire cost lost brown wear garden equal sent choose fell fit flow
fair bank collect save control decimal gentle woman captain practice separate difficult
doctor please protect noon whose locate ring character insect caught period indicate radio
spoke atom human history effect electric expect crop modern element hit student corner
party supply bone rail imagine provide agree thus capital chair danger fruit rich thick
soldier process operate guess necessary sharp wing create neighbor wash bat rather crowd
corn compare poem string bell depend meat rub tube famous dollar stream fear sight thin
triangle planet hurry chief colony clock mine tie enter major fresh search send yellow gun
allow print dead spot desert suit current lift rose continue block chart hat sell success
company subtract event particular deal swim term opposite wife shoe shoulder spread
arrange camp invent cotton born determine quart nine truck noise level chance gather shop
stretch throw shine property column molecule select wrong gray repeat require broad
prepare salt nose plural anger claim continent oxygen sugar death pretty skill women
season solution magnet silver thank branch match suffix especially fig afraid huge sister
steel discuss forward similar guide experience score apple bought led pitch coat mass card
band rope slip win dream evening condition feed tool total basic smell valley nor double
seat arrive master track parent shore division sheet substance favor connect post spend
chord fat glad original share station dad bread charge proper bar offer segment slave duck
instant market degree populate chick dear enemy reply drink occur support speech nature
range steam motion path liquid log meant quotient teeth shell neck
""".split()

CITIES = ["Aberdeen", "Bergen", "Cadiz", "Dresden", "Esbjerg", "Faro", "Genoa", "Hull",
          "Izmir", "Jena", "Kiel", "Lyon", "Malmo", "Nantes", "Oulu", "Porto"]


class Xorshift:
    """xorshift64*: the only source of randomness of the set."""

    def __init__(self, seed):
        self.s = (seed * 0x9E3779B97F4A7C15 + 1) & 0xFFFFFFFFFFFFFFFF or 1

    def next(self):
        x = self.s
        x ^= x >> 12
        x ^= (x << 25) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 27
        self.s = x
        return (x * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF

    def below(self, n):
        return ((self.next() >> 32) * n) >> 32

    def zipf_word(self):
        # Skewed towards the front of WORDS (roughly Zipf-like): min of two uniform draws,
        # squared, so that word frequencies look like text and compressors have work to do.
        u = min(self.below(1 << 16), self.below(1 << 16))
        return WORDS[(u * u * len(WORDS)) >> 32]


def text(seed, nbytes):
    """Pseudo-English: sentences of Zipf-ish words, some commas, numbers and a few
    capitalized names, wrapped at 72 columns, blank lines between paragraphs."""
    r = Xorshift(seed)
    out, line, size = [], "", 0
    sentences_left = 3 + r.below(6)
    while size < nbytes:
        n = 4 + r.below(14)
        words = []
        for i in range(n):
            k = r.below(40)
            if k == 0:
                w = str(r.below(10000))
            elif k == 1:
                w = CITIES[r.below(len(CITIES))]
            else:
                w = r.zipf_word()
            if i > 1 and i < n - 1 and r.below(9) == 0:
                w += ","
            words.append(w)
        words[0] = words[0][0].upper() + words[0][1:]
        words[-1] += "?" if r.below(12) == 0 else "."
        for w in words:
            if line and len(line) + 1 + len(w) > 72:
                out.append(line + "\n")
                size += len(line) + 1
                line = w
            else:
                line = line + " " + w if line else w
        sentences_left -= 1
        if sentences_left == 0:
            out.append(line + "\n\n")
            size += len(line) + 2
            line = ""
            sentences_left = 3 + r.below(6)
    if line:
        out.append(line + "\n")
    return "".join(out).encode()


def words(seed, lines):
    r = Xorshift(seed)
    return "".join(r.zipf_word() + "\n" for _ in range(lines)).encode()


def numbers(seed, lines):
    """Integers of mixed magnitudes and signs, some repeated, some with leading zeros."""
    r = Xorshift(seed)
    out = []
    for _ in range(lines):
        digits = 1 + r.below(9)
        v = r.below(10 ** digits)
        s = str(v)
        if r.below(8) == 0:
            s = "-" + s
        elif r.below(16) == 0:
            s = "0" + s
        out.append(s + "\n")
    return "".join(out).encode()


def records(seed, lines):
    """CSV: id,name,city,quantity,price,code."""
    r = Xorshift(seed)
    out = ["id,name,city,quantity,price,code\n"]
    for i in range(lines):
        name = r.zipf_word() + "_" + r.zipf_word()
        city = CITIES[r.below(len(CITIES))]
        qty = 1 + r.below(500)
        price = "%d.%02d" % (r.below(1000), r.below(100))
        code = "".join("ABCDEFGHJKLMNPQRSTUVWXYZ"[r.below(24)] for _ in range(3)) + str(r.below(100))
        out.append(f"{100000 + i},{name},{city},{qty},{price},{code}\n")
    return "".join(out).encode()


def blob(seed, nbytes):
    """Binary with structure: runs, ramps, little-endian counters and noise."""
    r = Xorshift(seed)
    b = bytearray()
    while len(b) < nbytes:
        kind = r.below(4)
        n = 16 + r.below(240)
        if kind == 0:
            b += bytes([r.below(256)]) * n
        elif kind == 1:
            start = r.below(256)
            b += bytes((start + i) & 255 for i in range(n))
        elif kind == 2:
            base = r.next() & 0xFFFFFFFF
            for i in range(n // 4):
                b += ((base + i) & 0xFFFFFFFF).to_bytes(4, "little")
        else:
            b += bytes(r.below(256) for _ in range(n))
    return bytes(b[:nbytes])


def mutate(seed, data, changes):
    r = Xorshift(seed)
    b = bytearray(data)
    for _ in range(changes):
        i = r.below(len(b))
        b[i] ^= 1 + r.below(255)
    return bytes(b)


def tree_tar(seed, files):
    """A ustar archive with fixed owners, modes and mtimes (so `tar -xO` reads the same bytes
    everywhere): a source-like tree of many small text members and a few binary ones."""
    r = Xorshift(seed)
    buf = io.BytesIO()

    def member(name, kind, mode, body=b""):
        ti = tarfile.TarInfo(name)
        ti.type, ti.mode, ti.mtime, ti.size = kind, mode, MTIME, len(body)
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = "root"
        tar.addfile(ti, io.BytesIO(body) if body else None)

    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        member("tree", tarfile.DIRTYPE, 0o755)
        dirs = [f"tree/d{d:02d}" for d in range(24)]
        for d in dirs:
            member(d, tarfile.DIRTYPE, 0o755)
        for i in range(files):
            d = dirs[i % len(dirs)]
            if i % 100 == 99:
                member(f"{d}/f{i:04d}.bin", tarfile.REGTYPE, 0o644, blob(seed * 10000 + i, 512 + r.below(4096)))
            else:
                member(f"{d}/f{i:04d}.txt", tarfile.REGTYPE, 0o644, text(seed * 10000 + i, 100 + r.below(1100)))
    return buf.getvalue()


def busybox(*args):
    """Run the pinned busybox under QEMU from testbenches/linux, as the workloads run."""
    bb = os.path.join(LINUX, "bin", "busybox")
    if not os.path.isfile(bb):
        sys.exit("linux-inputs: bin/busybox is missing: run scripts/fetch-linux-workloads.sh first")
    p = subprocess.run(["env", "-i", "qemu-arm", "-cpu", "pxa270", "bin/busybox", *args],
                       cwd=LINUX, stdin=subprocess.DEVNULL, capture_output=True, check=True)
    return p.stdout


def plain_inputs():
    small = text(2, SMALL_BYTES)
    wl = words(3, WORDS_LINES)
    b1 = blob(6, BLOB_BYTES)
    return {
        "text.txt": text(1, TEXT_BYTES),
        "small.txt": small,
        "short.txt": text(9, SHORT_BYTES),
        "words.txt": wl,
        # Sorted (byte order, as busybox sort in the C locale) for `uniq -c`.
        "words.sorted.txt": b"".join(sorted(wl.splitlines(keepends=True))),
        "numbers.txt": numbers(4, NUMBERS_LINES),
        "records.csv": records(5, RECORDS_LINES),
        "blob.bin": b1,
        "blob2.bin": mutate(7, b1, 300),
        "tree.tar": tree_tar(8, TREE_FILES),
    }


# Made from the files above by busybox itself: name -> argv after "busybox".
DERIVED = {
    "text.txt.gz": ["gzip", "-9", "-c", "data/text.txt"],
    "small.txt.bz2": ["bzip2", "-c", "data/small.txt"],
}


def write(name, body):
    path = os.path.join(DATA, name)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(body)
    os.replace(tmp, path)
    os.utime(path, (MTIME, MTIME))


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def expected():
    """name -> sha256 recorded in programs.json (`inputs`), or {} before the first record."""
    try:
        with open(MANIFEST) as f:
            m = json.load(f)
    except FileNotFoundError:
        return {}
    return {os.path.basename(k): v for k, v in m.get("inputs", {}).items()}


def main():
    args = sys.argv[1:]
    if args not in ([], ["--if-missing"], ["--print"]):
        sys.exit(__doc__)
    if args == ["--print"]:
        for name in sorted(list(plain_inputs()) + list(DERIVED)):
            print(sha256(os.path.join(DATA, name)), "data/" + name)
        return
    want = expected()
    names = list(plain_inputs()) + list(DERIVED)

    def good(name):
        p = os.path.join(DATA, name)
        return os.path.isfile(p) and (name not in want or sha256(p) == want[name])

    if args == ["--if-missing"] and all(good(n) for n in names):
        return
    os.makedirs(DATA, exist_ok=True)
    for name, body in plain_inputs().items():
        write(name, body)
    for name, argv in DERIVED.items():
        write(name, busybox(*argv))
    os.utime(DATA, (MTIME, MTIME))
    bad = [n for n in names if not good(n)]
    if bad:
        sys.exit("linux-inputs: these inputs differ from the sha256 recorded in "
                 f"testbenches/linux/programs.json: {', '.join(bad)}")
    print(f"linux-inputs: wrote {len(names)} files to testbenches/linux/data"
          + (" (sha256 as recorded)" if want else " (no sha256 recorded yet)"), file=sys.stderr)


if __name__ == "__main__":
    main()
