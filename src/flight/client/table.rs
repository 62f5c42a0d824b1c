//! `Table`: a connection's streams by id. Ids only grow, so appending keeps the entries
//! sorted and a lookup is a binary search; a connection holds tens of streams, and a
//! `Vec` costs the wasm module far less code than a hash map.

/// Entries by increasing id.
pub(super) struct Table<T> {
    entries: Vec<(u32, T)>,
}

impl<T> Table<T> {
    pub fn new() -> Self {
        Table {
            entries: Vec::new(),
        }
    }

    fn find(&self, id: u32) -> Result<usize, usize> {
        self.entries.binary_search_by_key(&id, |(i, _)| *i)
    }

    pub fn get(&self, id: u32) -> Option<&T> {
        let at = self.find(id).ok()?;
        self.entries.get(at).map(|(_, t)| t)
    }

    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        let at = self.find(id).ok()?;
        self.entries.get_mut(at).map(|(_, t)| t)
    }

    /// Adds `id`, which must be new; an id lower than the last is put in its place.
    pub fn insert(&mut self, id: u32, value: T) {
        match self.find(id) {
            Ok(at) => self.entries[at].1 = value,
            Err(at) => self.entries.insert(at, (id, value)),
        }
    }

    pub fn remove(&mut self, id: u32) -> Option<T> {
        let at = self.find(id).ok()?;
        Some(self.entries.remove(at).1)
    }

    pub fn ids(&self) -> Vec<u32> {
        self.entries.iter().map(|(id, _)| *id).collect()
    }
}
