import sys
from pathlib import Path

# the loop oracle lives beside the tests, not in the library
sys.path.insert(0, str(Path(__file__).parent))
