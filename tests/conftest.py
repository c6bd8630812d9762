import sys
from pathlib import Path

# the loop oracle lives beside the tests, not in lib/
sys.path.insert(0, str(Path(__file__).parent))
