//! Cooklang out (filled in next).
